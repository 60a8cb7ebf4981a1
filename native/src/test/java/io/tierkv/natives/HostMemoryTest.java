package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;

import io.tierkv.natives.libc.Libc;
import io.tierkv.natives.runtime.NativeAccess;
import io.tierkv.natives.testing.ChildJvm;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HostMemoryTest {

    private static final long MIB = 1 << 20;

    @Test
    void memoryIsPageAlignedZeroedAndPinnedInWholePagesOrNotAtAll() {
        long page = Libc.pageSizeBytes();
        long requestedBefore = HostMemory.requestedBytesNow();
        long pinnedBefore = HostMemory.pinnedBytesNow();
        PinnedHostBuffer p = HostMemory.allocatePinned(3 * MIB + 1);
        try {
            long rounded = 3 * MIB + page;
            assertEquals(3 * MIB + 1, p.requestedBytes());
            assertEquals(3 * MIB + 1, p.segment().byteSize());
            assertEquals(0, p.segment().address() % page);
            try (Arena a = Arena.ofConfined()) {
                assertEquals(-1L, p.segment().mismatch(a.allocate(3 * MIB + 1)), "not zero-filled");
            }
            if (p.pinnedBytes() == 0) {
                assertTrue(Libc.memlockLimitBytes() < rounded, "mlock refused below the limit");
            } else {
                assertEquals(rounded, p.pinnedBytes());
            }
            assertEquals(requestedBefore + 3 * MIB + 1, HostMemory.requestedBytesNow());
            assertEquals(pinnedBefore + p.pinnedBytes(), HostMemory.pinnedBytesNow());
        } finally {
            p.close();
        }
        p.close();
        assertEquals(requestedBefore, HostMemory.requestedBytesNow());
        assertEquals(pinnedBefore, HostMemory.pinnedBytesNow());
        assertThrows(IllegalStateException.class, () -> p.segment().fill((byte) 1));
    }

    @Test
    void sizesMustBePositive() {
        var e = assertThrows(IllegalArgumentException.class, () -> HostMemory.allocatePinned(0));
        assertEquals("bytes: 0 (expected > 0)", e.getMessage());
    }

    /**
     * Runs a child JVM whose RLIMIT_MEMLOCK is 64 KiB and, when it runs as root, without
     * CAP_IPC_LOCK: 16 KiB must be pinned, 1 MiB refused, returned unlocked, and the reason logged.
     */
    @Test
    void overTheLockLimitMemoryIsReturnedUnlockedAndTheReasonIsLogged() throws Exception {
        List<String> prefix = new ArrayList<>();
        if (!onPath("prlimit")) {
            abort("prlimit (util-linux) is not installed");
        }
        prefix.addAll(List.of("prlimit", "--memlock=65536:65536"));
        if (Files.readString(Path.of("/proc/self/status")).lines()
                .anyMatch(l -> l.startsWith("Uid:") && l.split("\\s+")[1].equals("0"))) {
            if (!onPath("setpriv")) {
                abort("running as root and setpriv (util-linux) is not installed to drop CAP_IPC_LOCK");
            }
            prefix.addAll(List.of("setpriv", "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock"));
        }
        ChildJvm.Result r = ChildJvm.run(prefix, List.of(NativeAccess.flag()), PinMain.class);
        assertEquals(0, r.exitCode(), r.output());
        assertTrue(r.output().contains("small requested=16384 pinned=16384"), r.output());
        assertTrue(r.output().contains("large requested=1048576 pinned=0"), r.output());
        assertTrue(r.output().contains("mlock2(1048576 bytes, MLOCK_ONFAULT) failed: ENOMEM"), r.output());
        assertTrue(r.output().contains("RLIMIT_MEMLOCK soft limit 65536 bytes"), r.output());
    }

    private static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }

    /** Child JVM entry: pins a small and a large buffer and prints what it got. */
    public static final class PinMain {
        private PinMain() {}

        /**
         * Allocates and reports.
         *
         * @param args unused
         */
        public static void main(String[] args) {
            try (PinnedHostBuffer small = HostMemory.allocatePinned(16384);
                    PinnedHostBuffer large = HostMemory.allocatePinned(MIB)) {
                System.out.println("limit=" + Libc.memlockLimitBytes());
                System.out.println("small requested=" + small.requestedBytes() + " pinned=" + small.pinnedBytes());
                System.out.println("large requested=" + large.requestedBytes() + " pinned=" + large.pinnedBytes());
            }
        }
    }
}
