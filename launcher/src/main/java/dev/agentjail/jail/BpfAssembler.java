package dev.agentjail.jail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Assembles classic BPF ({@code struct sock_filter[]}) with named forward jump targets. */
final class BpfAssembler {
    static final int LD_W_ABS = 0x20;
    static final int JMP_JA = 0x05;
    static final int JMP_JEQ_K = 0x15;
    static final int JMP_JGE_K = 0x35;
    static final int JMP_JSET_K = 0x45;
    static final int RET_K = 0x06;
    /** Bytes per instruction: u16 code, u8 jt, u8 jf, u32 k. */
    static final int INSN_BYTES = 8;

    private record Insn(int code, String jumpTrue, String jumpFalse, int k) {}

    private final List<Insn> insns = new ArrayList<>();
    private final Map<String, Integer> labels = new HashMap<>();

    /** Marks the next instruction as the target {@code name}. */
    BpfAssembler label(String name) {
        if (labels.putIfAbsent(name, insns.size()) != null) {
            throw new IllegalStateException("label defined twice: " + name);
        }
        return this;
    }

    /** A = the 32-bit word at {@code offset} of struct seccomp_data. */
    BpfAssembler load(int offset) {
        return emit(LD_W_ABS, null, null, offset);
    }

    /** if (A == k) goto jumpTrue else goto jumpFalse; a null target means the next instruction. */
    BpfAssembler jumpIfEqual(int k, String jumpTrue, String jumpFalse) {
        return emit(JMP_JEQ_K, jumpTrue, jumpFalse, k);
    }

    /** if (A >= k), unsigned. */
    BpfAssembler jumpIfAtLeast(int k, String jumpTrue, String jumpFalse) {
        return emit(JMP_JGE_K, jumpTrue, jumpFalse, k);
    }

    /** if ((A & k) != 0). */
    BpfAssembler jumpIfAnySet(int k, String jumpTrue, String jumpFalse) {
        return emit(JMP_JSET_K, jumpTrue, jumpFalse, k);
    }

    BpfAssembler ret(int value) {
        return emit(RET_K, null, null, value);
    }

    /** Resolves the labels; classic BPF only jumps forward, at most 255 instructions. */
    byte[] assemble() {
        ByteBuffer out = ByteBuffer.allocate(insns.size() * INSN_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < insns.size(); i++) {
            Insn insn = insns.get(i);
            out.putShort((short) insn.code());
            out.put((byte) offset(i, insn.jumpTrue()));
            out.put((byte) offset(i, insn.jumpFalse()));
            out.putInt(insn.k());
        }
        return out.array();
    }

    private int offset(int from, String label) {
        if (label == null) {
            return 0;
        }
        Integer target = labels.get(label);
        if (target == null) {
            throw new IllegalStateException("undefined label: " + label);
        }
        int offset = target - from - 1;
        if (offset < 0 || offset > 255) {
            throw new IllegalStateException("jump to " + label + " out of range: " + offset);
        }
        return offset;
    }

    private BpfAssembler emit(int code, String jumpTrue, String jumpFalse, int k) {
        insns.add(new Insn(code, jumpTrue, jumpFalse, k));
        return this;
    }
}
