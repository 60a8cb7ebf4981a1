package io.tierkv.natives.libc;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Raw bindings to the C library, in the layout jextract generates: one lazily initialised holder
 * class per function with its {@link FunctionDescriptor}, symbol address and downcall
 * {@link MethodHandle}, behind a static method named after the C function.
 *
 * <p>Sources: {@code <fcntl.h>} (open, posix_fallocate, posix_fadvise), {@code <unistd.h>}
 * (close, sysconf), {@code <sys/mman.h>} (mmap, munmap, mlock, mlock2, munlock, madvise, mincore), {@code <sys/resource.h>}
 * (getrlimit), {@code <string.h>} (strerror), as listed in {@code native/jextract/includes.txt}.
 * The constants are the Linux values shared by x86_64 and aarch64 (glibc and musl); the type
 * mapping assumes an LP64 ABI ({@code long}, {@code off_t}, {@code size_t} and {@code rlim_t}
 * are 64 bits).
 *
 * <p>One deliberate difference from jextract output: functions that report failure through
 * {@code errno} are linked with {@link Linker.Option#captureCallState(String...)
 * captureCallState("errno")} and take, as their first argument, a segment of
 * {@link #CAPTURE_STATE_LAYOUT} that receives errno (read it with {@link #errno(MemorySegment)}).
 * jextract cannot generate this; reading errno after the call from Java is unreliable because the
 * JVM itself may change it.
 *
 * <p>Thread-safety: all methods are safe to call from any thread; the caller owns the segments
 * it passes. These methods are restricted in spirit: wrong addresses or lengths crash the JVM.
 * Use {@link Libc} for checked, segment-based calls.
 */
@SuppressWarnings("restricted")
public final class libc_h {

    private libc_h() {}

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup SYMBOL_LOOKUP = LINKER.defaultLookup();

    /** C {@code int}: 32-bit signed. */
    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    /** C {@code long}, {@code off_t}, {@code size_t}, {@code rlim_t} on LP64: 64 bits. */
    public static final ValueLayout.OfLong C_LONG = ValueLayout.JAVA_LONG;
    /** C pointer, unbounded target. */
    public static final AddressLayout C_POINTER = ValueLayout.ADDRESS
            .withTargetLayout(MemoryLayout.sequenceLayout(Long.MAX_VALUE, ValueLayout.JAVA_BYTE));

    /** Layout of the call state captured with {@code captureCallState("errno")}. */
    public static final StructLayout CAPTURE_STATE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_HANDLE = CAPTURE_STATE_LAYOUT.varHandle(
            MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    /** {@code struct rlimit { rlim_t rlim_cur; rlim_t rlim_max; }} (16 bytes on LP64). */
    public static final StructLayout RLIMIT_LAYOUT = MemoryLayout.structLayout(
            C_LONG.withName("rlim_cur"), C_LONG.withName("rlim_max")).withName("rlimit");

    /** {@code O_RDONLY}: open for reading only. */
    public static final int O_RDONLY = 0;
    /** {@code O_RDWR}: open for reading and writing. */
    public static final int O_RDWR = 2;
    /** {@code O_CLOEXEC}: close the descriptor on exec (Linux value {@code 02000000}). */
    public static final int O_CLOEXEC = 0x80000;
    /** {@code _SC_PAGESIZE}: sysconf name for the page size (Linux value 30). */
    public static final int _SC_PAGESIZE = 30;
    /** {@code RLIMIT_MEMLOCK}: bytes of memory that may be locked (Linux value 8). */
    public static final int RLIMIT_MEMLOCK = 8;
    /** {@code RLIM_INFINITY}: no limit ({@code ~0UL}, read as -1 through a Java long). */
    public static final long RLIM_INFINITY = -1L;
    /** {@code PROT_READ}: pages may be read. */
    public static final int PROT_READ = 1;
    /** {@code PROT_WRITE}: pages may be written. */
    public static final int PROT_WRITE = 2;
    /** {@code MAP_PRIVATE}: a private copy-on-write mapping. */
    public static final int MAP_PRIVATE = 2;
    /** {@code MAP_ANONYMOUS}: not backed by a file; pages read as zero until written (Linux value 0x20). */
    public static final int MAP_ANONYMOUS = 0x20;
    /** {@code MLOCK_ONFAULT}: mlock2 flag: lock pages as they are faulted in, not now. */
    public static final int MLOCK_ONFAULT = 1;
    /** {@code MAP_FAILED}: what mmap returns on failure, {@code (void *) -1}, as an address. */
    public static final long MAP_FAILED = -1L;

    /**
     * Reads errno out of a call-state segment.
     *
     * @param callState a segment of at least {@link #CAPTURE_STATE_LAYOUT}'s size that a
     *     capturing call has written
     * @return the captured errno value
     */
    public static int errno(MemorySegment callState) {
        return (int) ERRNO_HANDLE.get(callState, 0L);
    }

    private static MemorySegment findOrThrow(String symbol) {
        return SYMBOL_LOOKUP.find(symbol)
                .orElseThrow(() -> new UnsatisfiedLinkError("unresolved symbol: " + symbol));
    }

    private static class open {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_INT, C_INT);
        public static final MemorySegment ADDR = findOrThrow("open");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC,
                CAPTURE_ERRNO, Linker.Option.firstVariadicArg(2));
    }

    /**
     * {@code int open(const char *pathname, int flags, ... mode_t mode)}.
     *
     * @param callState receives errno; see {@link #CAPTURE_STATE_LAYOUT}
     * @param pathname NUL-terminated path
     * @param flags {@code O_*} flags
     * @param mode permission bits, used only with {@code O_CREAT}
     * @return a file descriptor, or -1 with errno set
     */
    public static int open(MemorySegment callState, MemorySegment pathname, int flags, int mode) {
        try {
            return (int) open.HANDLE.invokeExact(callState, pathname, flags, mode);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class close {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT);
        public static final MemorySegment ADDR = findOrThrow("close");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int close(int fd)}.
     *
     * @param callState receives errno; see {@link #CAPTURE_STATE_LAYOUT}
     * @param fd the descriptor to close
     * @return 0, or -1 with errno set
     */
    public static int close(MemorySegment callState, int fd) {
        try {
            return (int) close.HANDLE.invokeExact(callState, fd);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class posix_fallocate {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT, C_LONG, C_LONG);
        public static final MemorySegment ADDR = findOrThrow("posix_fallocate");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC);
    }

    /**
     * {@code int posix_fallocate(int fd, off_t offset, off_t len)}. Does not set errno.
     *
     * @param fd a descriptor open for writing
     * @param offset first byte to reserve
     * @param len bytes to reserve
     * @return 0, or the error number (for example {@code ENOSPC} 28)
     */
    public static int posix_fallocate(int fd, long offset, long len) {
        try {
            return (int) posix_fallocate.HANDLE.invokeExact(fd, offset, len);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class posix_fadvise {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT, C_LONG, C_LONG, C_INT);
        public static final MemorySegment ADDR = findOrThrow("posix_fadvise");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC);
    }

    /**
     * {@code int posix_fadvise(int fd, off_t offset, off_t len, int advice)}. Does not set errno.
     *
     * @param fd an open descriptor
     * @param offset first byte the advice applies to
     * @param len bytes the advice applies to; 0 means to the end of the file
     * @param advice a {@code POSIX_FADV_*} constant
     * @return 0, or the error number
     */
    public static int posix_fadvise(int fd, long offset, long len, int advice) {
        try {
            return (int) posix_fadvise.HANDLE.invokeExact(fd, offset, len, advice);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mmap {
        public static final FunctionDescriptor DESC =
                FunctionDescriptor.of(C_POINTER, C_POINTER, C_LONG, C_INT, C_INT, C_INT, C_LONG);
        public static final MemorySegment ADDR = findOrThrow("mmap");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)}.
     *
     * @param callState receives errno; see {@link #CAPTURE_STATE_LAYOUT}
     * @param addr a hint, or {@link MemorySegment#NULL} for the kernel's choice
     * @param length bytes to map (rounded up to a page by the kernel)
     * @param prot {@code PROT_*} bits
     * @param flags {@code MAP_*} bits
     * @param fd a file descriptor, -1 for {@link #MAP_ANONYMOUS}
     * @param offset offset in the file, a multiple of the page size
     * @return the start of the mapping, or an address of {@link #MAP_FAILED} with errno set
     *     ({@code ENOMEM}, {@code EINVAL})
     */
    public static MemorySegment mmap(MemorySegment callState, MemorySegment addr, long length, int prot, int flags,
            int fd, long offset) {
        try {
            return (MemorySegment) mmap.HANDLE.invokeExact(callState, addr, length, prot, flags, fd, offset);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class munmap {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_LONG);
        public static final MemorySegment ADDR = findOrThrow("munmap");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int munmap(void *addr, size_t length)}.
     *
     * @param callState receives errno; see {@link #CAPTURE_STATE_LAYOUT}
     * @param addr page-aligned start of the range
     * @param length bytes to unmap
     * @return 0, or -1 with errno set ({@code EINVAL})
     */
    public static int munmap(MemorySegment callState, MemorySegment addr, long length) {
        try {
            return (int) munmap.HANDLE.invokeExact(callState, addr, length);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mlock {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_LONG);
        public static final MemorySegment ADDR = findOrThrow("mlock");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int mlock(const void *addr, size_t len)}.
     *
     * @param callState receives errno; see {@link #CAPTURE_STATE_LAYOUT}
     * @param addr start of the range (rounded down to a page by the kernel)
     * @param len bytes to lock
     * @return 0, or -1 with errno set ({@code ENOMEM} over RLIMIT_MEMLOCK, {@code EPERM})
     */
    public static int mlock(MemorySegment callState, MemorySegment addr, long len) {
        try {
            return (int) mlock.HANDLE.invokeExact(callState, addr, len);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mlock2 {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_LONG, C_INT);
        public static final MemorySegment ADDR = findOrThrow("mlock2");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int mlock2(const void *addr, size_t len, unsigned int flags)} (Linux 4.4, glibc 2.27).
     *
     * @param callState receives errno; see {@link #CAPTURE_STATE_LAYOUT}
     * @param addr start of the range (rounded down to a page by the kernel)
     * @param len bytes to lock
     * @param flags 0 (as mlock) or {@link #MLOCK_ONFAULT}
     * @return 0, or -1 with errno set ({@code ENOMEM} over RLIMIT_MEMLOCK, {@code EPERM},
     *     {@code EINVAL} for unknown flags)
     */
    public static int mlock2(MemorySegment callState, MemorySegment addr, long len, int flags) {
        try {
            return (int) mlock2.HANDLE.invokeExact(callState, addr, len, flags);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class munlock {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_LONG);
        public static final MemorySegment ADDR = findOrThrow("munlock");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int munlock(const void *addr, size_t len)}.
     *
     * @param callState receives errno; see {@link #CAPTURE_STATE_LAYOUT}
     * @param addr start of the range
     * @param len bytes to unlock
     * @return 0, or -1 with errno set
     */
    public static int munlock(MemorySegment callState, MemorySegment addr, long len) {
        try {
            return (int) munlock.HANDLE.invokeExact(callState, addr, len);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class mincore {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_LONG, C_POINTER);
        public static final MemorySegment ADDR = findOrThrow("mincore");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int mincore(void *addr, size_t length, unsigned char *vec)}.
     *
     * @param callState receives errno; see {@link #CAPTURE_STATE_LAYOUT}
     * @param addr page-aligned start of the range
     * @param length bytes of the range
     * @param vec receives one byte per page of the range; bit 0 set when the page is resident
     * @return 0, or -1 with errno set ({@code EINVAL} for an unaligned address, {@code ENOMEM}
     *     for a range that is not mapped)
     */
    public static int mincore(MemorySegment callState, MemorySegment addr, long length, MemorySegment vec) {
        try {
            return (int) mincore.HANDLE.invokeExact(callState, addr, length, vec);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class madvise {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_LONG, C_INT);
        public static final MemorySegment ADDR = findOrThrow("madvise");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int madvise(void *addr, size_t length, int advice)}.
     *
     * @param callState receives errno; see {@link #CAPTURE_STATE_LAYOUT}
     * @param addr page-aligned start of the range
     * @param length bytes the advice applies to
     * @param advice a {@code MADV_*} constant
     * @return 0, or -1 with errno set ({@code EINVAL} for an unaligned address)
     */
    public static int madvise(MemorySegment callState, MemorySegment addr, long length, int advice) {
        try {
            return (int) madvise.HANDLE.invokeExact(callState, addr, length, advice);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class getrlimit {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT, C_POINTER);
        public static final MemorySegment ADDR = findOrThrow("getrlimit");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC, CAPTURE_ERRNO);
    }

    /**
     * {@code int getrlimit(int resource, struct rlimit *rlim)}.
     *
     * @param callState receives errno; see {@link #CAPTURE_STATE_LAYOUT}
     * @param resource an {@code RLIMIT_*} constant
     * @param rlim out-parameter of {@link #RLIMIT_LAYOUT}
     * @return 0, or -1 with errno set
     */
    public static int getrlimit(MemorySegment callState, int resource, MemorySegment rlim) {
        try {
            return (int) getrlimit.HANDLE.invokeExact(callState, resource, rlim);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class sysconf {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_LONG, C_INT);
        public static final MemorySegment ADDR = findOrThrow("sysconf");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC);
    }

    /**
     * {@code long sysconf(int name)}.
     *
     * @param name a {@code _SC_*} constant
     * @return the value, or -1
     */
    public static long sysconf(int name) {
        try {
            return (long) sysconf.HANDLE.invokeExact(name);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class strerror {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(C_POINTER, C_INT);
        public static final MemorySegment ADDR = findOrThrow("strerror");
        public static final MethodHandle HANDLE = LINKER.downcallHandle(ADDR, DESC);
    }

    /**
     * {@code char *strerror(int errnum)}.
     *
     * @param errnum an error number
     * @return a NUL-terminated message owned by the C library (read it at once)
     */
    public static MemorySegment strerror(int errnum) {
        try {
            return (MemorySegment) strerror.HANDLE.invokeExact(errnum);
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }
}
