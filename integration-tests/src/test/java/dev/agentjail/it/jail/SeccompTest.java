package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Prerequisites;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent runs without privileges and behind the seccomp filter (corpus §11 cases 163, 165, 173, 174): no new
 * namespaces ({@code unshare -U}, {@code -n}, {@code -m} fail), NoNewPrivs set, every capability set empty, a seccomp
 * filter in place, only the jail's own processes in /proc, / and /usr read-only; and the blocked syscalls answer EPERM
 * (clone3 ENOSYS) where the kernel without the filter would answer something else, including TIOCSTI with the upper 32
 * bits of the request set (CVE-2019-10063).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SeccompTest {
    private static final Path PERL = Path.of("/usr/bin/perl");
    private static final int EPERM = 1;
    private static final int ENOSYS = 38;

    /** Syscall numbers per architecture (x86_64 has its own table; aarch64 uses the generic one). */
    private static final Map<String, Map<String, Integer>> SYSCALLS = Map.of(
            "amd64",
            numbers(250, 248, 425, 298, 428, 430, 308, 272, 435, 16, 135, 317),
            "aarch64",
            numbers(219, 217, 425, 241, 428, 430, 268, 97, 435, 29, 92, 277));

    /** ptrace, process_vm_readv/writev, pidfd_open, pidfd_getfd. */
    private static final Map<String, Map<String, Integer>> PID1_SYSCALLS = Map.of(
            "amd64",
            Map.of(
                    "ptrace",
                    101,
                    "process_vm_readv",
                    310,
                    "process_vm_writev",
                    311,
                    "pidfd_open",
                    434,
                    "pidfd_getfd",
                    438),
            "aarch64",
            Map.of(
                    "ptrace",
                    117,
                    "process_vm_readv",
                    270,
                    "process_vm_writev",
                    271,
                    "pidfd_open",
                    434,
                    "pidfd_getfd",
                    438));

    private static final int EACCES = 13;

    @TempDir
    Path dir;

    private static Map<String, Integer> numbers(int... nr) {
        String[] names = {
            "keyctl",
            "add_key",
            "io_uring_setup",
            "perf_event_open",
            "open_tree",
            "fsopen",
            "setns",
            "unshare",
            "clone3",
            "ioctl",
            "personality",
            "seccomp"
        };
        Map<String, Integer> m = new LinkedHashMap<>();
        for (int i = 0; i < names.length; i++) {
            m.put(names[i], nr[i]);
        }
        return m;
    }

    @Test
    void noNewNamespacesNoPrivilegesAndOnlyTheJailsProcesses() {
        AgentjailRun.requireBwrap();
        AgentjailRun.Outcome o = AgentjailRun.in(dir).bash("""
                unshare -U true 2>"$PWD/e"; echo "unshare_user=$? $(cat "$PWD/e")"
                unshare -n true 2>/dev/null; echo "unshare_net=$?"
                unshare -m true 2>/dev/null; echo "unshare_mount=$?"
                unshare -Urm sh -c 'mount -t tmpfs x /mnt' 2>/dev/null; echo "unshare_mount_tmpfs=$?"
                for f in NoNewPrivs CapInh CapPrm CapEff CapBnd CapAmb Seccomp; do
                  echo "$f=$(awk -v k="$f:" '$1 == k {print $2}' /proc/self/status)"
                done
                echo "uid=$(id -u)"
                echo "hostname=$(cat /proc/sys/kernel/hostname)"
                echo "pids=$(ls /proc | grep -c '^[0-9][0-9]*$')"
                touch /agentjail-it 2>/dev/null; echo "write_root=$?"
                touch /usr/agentjail-it 2>/dev/null; echo "write_usr=$?"
                touch /etc/agentjail-it 2>/dev/null; echo "write_etc=$?"
                [ -e /etc/ssl/private ]; echo "ssl_private=$?"
                [ -S /var/run/docker.sock ] || [ -S /run/docker.sock ]; echo "docker_sock=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertTrue(o.probe("unshare_user").startsWith("1 "), o.probe("unshare_user")),
                () -> assertTrue(o.probe("unshare_user").contains("Operation not permitted"), o.probe("unshare_user")),
                () -> assertNotEquals("0", o.probe("unshare_net"), "unshare -n"),
                () -> assertNotEquals("0", o.probe("unshare_mount"), "unshare -m"),
                () -> assertNotEquals("0", o.probe("unshare_mount_tmpfs"), "unshare -Urm + mount"),
                () -> assertEquals("1", o.probe("NoNewPrivs"), o::describe),
                () -> assertEquals("0000000000000000", o.probe("CapInh"), o::describe),
                () -> assertEquals("0000000000000000", o.probe("CapPrm"), o::describe),
                () -> assertEquals("0000000000000000", o.probe("CapEff"), o::describe),
                () -> assertEquals("0000000000000000", o.probe("CapBnd"), o::describe),
                () -> assertEquals("0000000000000000", o.probe("CapAmb"), o::describe),
                () -> assertEquals("2", o.probe("Seccomp"), "seccomp mode 2 (filter)"),
                () -> assertNotEquals("0", o.probe("uid"), "the agent is not root inside"),
                () -> assertEquals("agentjail", o.probe("hostname"), "the default hostname (own uts namespace)"),
                () -> assertTrue(Integer.parseInt(o.probe("pids")) < 10, () -> "processes in /proc: " + o.describe()),
                () -> assertNotEquals("0", o.probe("write_root"), "creating a file in /"),
                () -> assertNotEquals("0", o.probe("write_usr"), "creating a file in /usr"),
                () -> assertNotEquals("0", o.probe("write_etc"), "creating a file in /etc"),
                () -> assertNotEquals("0", o.probe("ssl_private"), "/etc/ssl/private is visible"),
                () -> assertNotEquals("0", o.probe("docker_sock"), "the docker socket is visible"));
    }

    @Test
    void theJailsPid1IsAgentjailInitUnderTheSameFiltersAndOutOfTheAgentsReach() {
        Map<String, Integer> nr = perlProbes(PID1_SYSCALLS);
        // bwrap's own reaper as pid 1 ran under no filter and could be ptraced by the agent into running anything
        // unaudited and undenied. Every way to another process's memory, registers or descriptors must be closed.
        String script = """
                my %%nr = (%s);
                sub probe { my ($label, $name, @args) = @_; $! = 0; my $r = syscall($nr{$name}, @args);
                            printf "%%s=%%d\n", $label, $r == -1 ? 0 + $! : -1000; }
                probe("ptrace_seize", "ptrace", 0x4206, 1, 0, 0);
                probe("ptrace_attach", "ptrace", 16, 1, 0, 0);
                my $buf = "\\0" x 16; my $local = pack("QQ", unpack("Q", pack("p", $buf)), 16);
                my $remote = pack("QQ", 0x400000, 16);
                probe("process_vm_readv", "process_vm_readv", 1, $local, 1, $remote, 1, 0);
                probe("process_vm_writev", "process_vm_writev", 1, $local, 1, $remote, 1, 0);
                my $pidfd = syscall($nr{pidfd_open}, 1, 0);
                printf "pidfd_open=%%d\n", $pidfd >= 0 ? 0 : 0 + $!;
                probe("pidfd_getfd", "pidfd_getfd", $pidfd, 0, 0) if $pidfd >= 0;
                for my $f ("mem", "environ", "fd/0") {
                    my $ok = open(my $h, "<", "/proc/1/$f"); printf "read_%%s=%%d\n", $f =~ s{/}{}r, $ok ? 0 : 0 + $!;
                }
                my $ok = open(my $m, "+<", "/proc/1/mem"); printf "write_mem=%%d\n", $ok ? 0 : 0 + $!;
                open(my $s, "<", "/proc/1/status");
                while (<$s>) { print "pid1_$1=$2\n" if /^(Seccomp|NoNewPrivs|Name):\\s*(\\S+)/; }
                """.formatted(table(nr));
        AgentjailRun.Outcome o = AgentjailRun.in(dir).run(PERL.toString(), "-e", script);

        assertEquals(0, o.exitCode(), o::describe);
        Map<String, String> p = o.probes();
        String eperm = String.valueOf(EPERM);
        String eacces = String.valueOf(EACCES);
        assertAll(
                () -> assertEquals("agentjail-init", p.get("pid1_Name"), o::describe),
                () -> assertEquals("2", p.get("pid1_Seccomp"), () -> "pid 1 runs under the filters; " + o.describe()),
                () -> assertEquals("1", p.get("pid1_NoNewPrivs"), o::describe),
                () -> assertEquals(eperm, p.get("ptrace_seize"), o::describe),
                () -> assertEquals(eperm, p.get("ptrace_attach"), o::describe),
                () -> assertEquals(eperm, p.get("process_vm_readv"), o::describe),
                () -> assertEquals(eperm, p.get("process_vm_writev"), o::describe),
                () -> assertEquals("0", p.get("pidfd_open"), o::describe),
                () -> assertEquals(eperm, p.get("pidfd_getfd"), o::describe),
                () -> assertEquals(eacces, p.get("read_mem"), o::describe),
                () -> assertEquals(eacces, p.get("read_environ"), o::describe),
                () -> assertEquals(eacces, p.get("read_fd0"), o::describe),
                () -> assertEquals(eacces, p.get("write_mem"), o::describe));
    }

    /** What a perl probe of raw syscalls needs: bwrap, perl, and this architecture's numbers from {@code byArch}. */
    private static Map<String, Integer> perlProbes(Map<String, Map<String, Integer>> byArch) {
        AgentjailRun.requireBwrap();
        Prerequisites.require(PERL);
        Map<String, Integer> nr = byArch.get(System.getProperty("os.arch"));
        Prerequisites.require(nr != null, "syscall numbers for " + System.getProperty("os.arch"));
        return nr;
    }

    /** A perl hash's entries: {@code name=>number, ...}. */
    private static String table(Map<String, Integer> nr) {
        return nr.entrySet().stream().map(e -> e.getKey() + "=>" + e.getValue()).collect(Collectors.joining(", "));
    }

    @Test
    void blockedSyscallsAnswerEpermInside() {
        Map<String, Integer> nr = perlProbes(SYSCALLS);
        String table = table(nr);
        // Each probe's arguments make the call fail without the filter with an error other than EPERM (EINVAL,
        // EFAULT, EBADF, ENOTTY), or succeed (unshare(0), personality): only the filter answers EPERM to all.
        String script = """
                my %%nr = (%s);
                sub probe { my ($label, $name, @args) = @_; $! = 0; my $r = syscall($nr{$name}, @args);
                            printf "%%s=%%d\\n", $label, $r == -1 ? 0 + $! : -1000; }
                my $c = "x";
                probe("keyctl", "keyctl", 0, 0, 0, 0, 0);
                probe("add_key", "add_key", 0, 0, 0, 0, 0);
                probe("io_uring_setup", "io_uring_setup", 0, 0);
                probe("perf_event_open", "perf_event_open", 0, 0, 0, 0, 0);
                probe("open_tree", "open_tree", -1, 0, 0);
                probe("fsopen", "fsopen", 0, 0);
                probe("setns", "setns", -1, 0);
                probe("unshare", "unshare", 0);
                probe("clone3", "clone3", 0, 0);
                probe("tiocsti", "ioctl", 0, 0x5412, $c);
                probe("tiocsti_high_bits", "ioctl", 0, 0x5412 | (1 << 32), $c);
                probe("tioclinux", "ioctl", 0, 0x541C, $c);
                probe("personality_read_implies_exec", "personality", 0x0400000);
                probe("seccomp_new_listener", "seccomp", 1, 8, 0);
                """.formatted(table);
        AgentjailRun.Outcome o = AgentjailRun.in(dir).run(PERL.toString(), "-e", script);

        assertEquals(0, o.exitCode(), o::describe);
        Map<String, String> p = o.probes();
        assertAll(p.keySet().stream().filter(k -> !k.equals("clone3")).map(k -> (Executable)
                () -> assertEquals(String.valueOf(EPERM), p.get(k), () -> k + ": errno; " + o.describe())));
        assertEquals(14, p.size(), o::describe);
        assertEquals(
                String.valueOf(ENOSYS), p.get("clone3"), () -> "clone3 (glibc falls back to clone); " + o.describe());
    }
}
