package io.tierkv.tiers;

import static io.tierkv.core.budget.MachineMemory.format;

import io.tierkv.core.KvLayout;
import io.tierkv.core.budget.MachineMemory;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.error.MachineLimitException;
import io.tierkv.natives.GpuRuntime;
import io.tierkv.natives.MemoryInfo;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskFormat;
import io.tierkv.tiers.disk.store.DiskTier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.ToLongFunction;

/**
 * Checks, before {@link KvBlockManagerBuilder#build()} allocates anything, that what the manager
 * reserves up front ({@link TierSizes}) fits what the machine has now. Every pool is mapped whole
 * at build and its pages committed as blocks first land in them (README, "Pool memory"; why:
 * {@code PoolMemory} in the native module), so a pool that does not fit is not refused by the
 * kernel but killed by its OOM killer once it fills; these checks turn that into a
 * {@link MachineLimitException} at build, naming the option, its value and the bound. They cannot
 * keep other processes from taking the memory later.
 *
 * <ol>
 *   <li>Device memory: a GPU's free memory ({@code hipMemGetInfo} / {@code cudaMemGetInfo}) minus
 *       a reserve ({@link #deviceReserveBytes}) for the runtime's own allocations and
 *       fragmentation; the emulated device's free capacity.
 *   <li>Host memory: the emulated device's slots (host memory), the pinned host buffer, the
 *       transfer staging buffers and the native block metadata together, against
 *       {@link MachineMemory#poolBytes()} ({@code MemAvailable} minus the heap the JVM may still
 *       commit minus a reserve).
 *   <li>The Java heap: the arrays indexed by block id, estimated at {@link #HEAP_BYTES_PER_BLOCK}
 *       per block id, against the largest heap ({@code -Xmx}). Not against the heap free now,
 *       which garbage not yet collected makes look full: a build past {@code -Xmx} can never
 *       succeed, one within it fails only if live data fills the heap.
 *   <li>Disk space: what the disk tier reserves when it opens (metadata, and the deletion journal
 *       when persistent), against the usable space of the directory's file system. The disk
 *       budget itself is a ceiling, not a reservation: each segment is reserved when a record first
 *       needs it, after its own check of usable space.
 * </ol>
 * The option blamed for host memory or heap is the one with the largest share (device, host or
 * disk budget); the message lists every term.
 */
final class MachineFit {

    /**
     * Java heap per block id, an upper estimate: the arrays of the cache, the host tier, the
     * policies and the prefix index measured 64 B per block id with LRU and half the ids on each
     * tier ({@code ManagerFootprint}, 1e7 ids, issue 19) and 46-55 B per disk record; policies
     * that keep more per id (S3-FIFO's queues and ghost, LFU's counts) and smaller managers (81 B at
     * 1e5 ids) take more, which this leaves room for.
     */
    static final long HEAP_BYTES_PER_BLOCK = 256;
    /** Smallest reserve kept free on a GPU: 64 MiB. */
    static final long MIN_DEVICE_RESERVE_BYTES = 64L << 20;
    /** Largest reserve kept free on a GPU: 1 GiB. */
    static final long MAX_DEVICE_RESERVE_BYTES = 1L << 30;

    private MachineFit() {
    }

    /**
     * The reserve kept free on a GPU: 1/64 of its memory, at least 64 MiB, at most 1 GiB.
     *
     * @param totalBytes the device's memory
     * @return bytes
     */
    static long deviceReserveBytes(long totalBytes) {
        return Math.max(MIN_DEVICE_RESERVE_BYTES, Math.min(MAX_DEVICE_RESERVE_BYTES, totalBytes / 64));
    }

    /**
     * Runs the checks in order: device, host memory, heap, disk.
     *
     * @param s           what the build commits
     * @param runtime     the device runtime
     * @param disk        the disk tier's options, or null
     * @param memory      the machine's memory now, or empty where it cannot be read (host memory and
     *                    heap are not checked then)
     * @param usableBytes usable bytes of the file system holding a directory, or -1 if unknown
     * @throws MachineLimitException for the first check that fails
     * @throws io.tierkv.natives.GpuException if the runtime cannot report its memory
     */
    static void check(TierSizes s, GpuRuntime runtime, DiskOptions disk, Optional<MachineMemory> memory,
            ToLongFunction<Path> usableBytes) {
        boolean hostBacked = runtime.deviceMemoryIsHostMemory();
        checkDevice(s, runtime, hostBacked);
        if (memory.isPresent()) {
            checkHost(s, disk, memory.get(), hostBacked);
            checkHeap(s, disk, memory.get());
        }
        if (disk != null) {
            checkDisk(s, disk, usableBytes);
        }
    }

    private static void checkDevice(TierSizes s, GpuRuntime runtime, boolean hostBacked) {
        MemoryInfo info = runtime.memoryInfo();
        long need = s.deviceSlotBytes();
        String slots = "needs " + format(need) + " of device slots (" + s.deviceBlocks() + " blocks); ";
        if (hostBacked) {
            if (need > info.freeBytes()) {
                throw new MachineLimitException("device.budgetBytes", s.deviceBytes(),
                        "the " + runtime.name() + " device's capacity", need, info.freeBytes(),
                        slots + "available " + format(info.freeBytes()) + " free of its " + format(info.totalBytes())
                                + " capacity");
            }
            return;
        }
        long reserve = deviceReserveBytes(info.totalBytes());
        long available = Math.max(0, info.freeBytes() - reserve);
        if (need > available) {
            throw new MachineLimitException("device.budgetBytes", s.deviceBytes(), runtime.name() + " device memory",
                    need, available, slots + "available " + format(available) + " = " + runtime.name() + " free memory "
                            + format(info.freeBytes())
                            + " of " + format(info.totalBytes()) + " (MemGetInfo) - " + format(reserve) + " reserve");
        }
    }

    private static void checkHost(TierSizes s, DiskOptions disk, MachineMemory m, boolean hostBacked) {
        long device = hostBacked ? s.deviceSlotBytes() : 0;
        long host = s.hostSlotBytes();
        long staging = s.stagingBytes();
        long meta = s.metadataBytes();
        long need = device + host + staging + meta;
        String terms = format(need) + " = " + (hostBacked ? "emulated device " + format(device) + " + " : "")
                + "pinned host " + format(host) + " + transfer staging " + format(staging) + " + block metadata "
                + format(meta) + " (" + s.maxBlocks() + " block ids)";
        long perId = PagedKvCache.metadataBytes(s.layout(), 1);
        Blame b = blame(s, disk, device + perId * s.deviceBlocks(), host + staging + perId * s.hostBlocks(),
                perId * s.diskBlocks());
        m.checkHost(b.option, b.valueBytes, need, terms);
    }

    private static void checkHeap(TierSizes s, DiskOptions disk, MachineMemory m) {
        long need = s.maxBlocks() * HEAP_BYTES_PER_BLOCK;
        if (need > m.heapMaxBytes()) {
            Blame b = blame(s, disk, s.deviceBlocks(), s.hostBlocks(), s.diskBlocks());
            throw new MachineLimitException(b.option, b.valueBytes, "the Java heap", need, m.heapMaxBytes(),
                    "needs about " + format(need) + " of block metadata (" + s.maxBlocks() + " block ids x "
                            + HEAP_BYTES_PER_BLOCK + " B); available " + format(m.heapMaxBytes())
                            + " of heap at most (-Xmx: raise it, or use larger blocks)");
        }
    }

    private static void checkDisk(TierSizes s, DiskOptions disk, ToLongFunction<Path> usableBytes) {
        long need = Math.max(0, disk.reservedAtOpenBytes(s.layout()) - heldAlready(disk, s.layout()));
        Path existing = existingAncestor(disk.directory());
        long usable = existing == null ? -1 : usableBytes.applyAsLong(existing);
        if (usable >= 0 && need > usable) {
            throw new MachineLimitException("disk.budgetBytes", disk.budgetBytes(), "disk space at " + disk.directory(),
                    need, usable, "the disk tier reserves " + format(need) + " when it opens ("
                            + (disk.persistent() ? "the deletion journal, sized from the budget, and its metadata"
                                    : "its metadata")
                            + "); usable " + format(usable) + " on the file system of " + existing);
        }
    }

    /**
     * What the files a restart reopens already hold of {@link DiskOptions#reservedAtOpenBytes}: the
     * metadata file, and a persistent tier's journal of the size it would be made with (recovery
     * opens such a journal in place when it holds just the entries it keeps; a journal it must
     * rewrite needs its size free again, and the open fails then with a {@code DiskFullException}).
     * So a tier that filled its file system opens again over its own files.
     */
    private static long heldAlready(DiskOptions disk, KvLayout layout) {
        long held = sizeOrZero(disk.directory().resolve(DiskFormat.META_FILE));
        if (disk.persistent()) {
            long journal = DiskFormat.journalBytes(DiskFormat.journalCapacity(disk.budgetBytes(), layout));
            if (sizeOrZero(disk.directory().resolve(DiskFormat.JOURNAL_FILE)) == journal) {
                held += journal;
            }
        }
        return held;
    }

    private static long sizeOrZero(Path file) {
        try {
            return Files.isRegularFile(file, java.nio.file.LinkOption.NOFOLLOW_LINKS) ? Files.size(file) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    /** {@return usable bytes of the file system holding a directory, or -1 if unknown} */
    static long usableBytes(Path dir) {
        try {
            return Files.getFileStore(dir).getUsableSpace();
        } catch (IOException | SecurityException e) {
            return -1;
        }
    }

    /** {@return the directory itself if it exists, else its nearest existing ancestor, or null} */
    private static Path existingAncestor(Path dir) {
        for (Path p = dir.toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p)) {
                return p;
            }
        }
        return null;
    }

    private record Blame(String option, long valueBytes) {
    }

    /** {@return the budget with the largest share; ties go to host, then device} */
    private static Blame blame(TierSizes s, DiskOptions disk, long deviceShare, long hostShare, long diskShare) {
        if (disk != null && diskShare > hostShare && diskShare > deviceShare) {
            return new Blame("disk.budgetBytes", disk.budgetBytes());
        }
        if (deviceShare > hostShare) {
            return new Blame("device.budgetBytes", s.deviceBytes());
        }
        return new Blame("host.budgetBytes", s.hostBytes());
    }
}
