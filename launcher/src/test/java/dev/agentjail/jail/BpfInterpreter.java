package dev.agentjail.jail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Runs a classic BPF seccomp program over one struct seccomp_data, as the kernel would (the subset we emit). */
final class BpfInterpreter {
    private final ByteBuffer program;

    BpfInterpreter(byte[] program) {
        if (program.length == 0 || program.length % BpfAssembler.INSN_BYTES != 0) {
            throw new IllegalArgumentException("not a sock_filter array: " + program.length + " bytes");
        }
        this.program = ByteBuffer.wrap(program).order(ByteOrder.LITTLE_ENDIAN);
    }

    int instructionCount() {
        return program.capacity() / BpfAssembler.INSN_BYTES;
    }

    /** Returns the SECCOMP_RET_* value for a syscall. */
    int run(int arch, int nr, long... args) {
        ByteBuffer data = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        data.putInt(0, nr).putInt(4, arch).putLong(8, 0x7f00_1234_5678L);
        for (int i = 0; i < args.length; i++) {
            data.putLong(16 + 8 * i, args[i]);
        }
        int accumulator = 0;
        int pc = 0;
        while (true) {
            if (pc >= instructionCount()) {
                throw new IllegalStateException("ran off the end of the program");
            }
            int base = pc * BpfAssembler.INSN_BYTES;
            int code = Short.toUnsignedInt(program.getShort(base));
            int jt = Byte.toUnsignedInt(program.get(base + 2));
            int jf = Byte.toUnsignedInt(program.get(base + 3));
            int k = program.getInt(base + 4);
            pc++;
            switch (code) {
                case BpfAssembler.LD_W_ABS -> {
                    if (k < 0 || k > 60 || k % 4 != 0) {
                        throw new IllegalStateException("load outside seccomp_data: " + k);
                    }
                    accumulator = data.getInt(k);
                }
                case BpfAssembler.JMP_JEQ_K -> pc += accumulator == k ? jt : jf;
                case BpfAssembler.JMP_JGE_K -> pc += Integer.compareUnsigned(accumulator, k) >= 0 ? jt : jf;
                case BpfAssembler.JMP_JSET_K -> pc += (accumulator & k) != 0 ? jt : jf;
                case BpfAssembler.JMP_JA -> pc += k;
                case BpfAssembler.RET_K -> {
                    return k;
                }
                default -> throw new IllegalStateException("unsupported opcode 0x" + Integer.toHexString(code));
            }
        }
    }
}
