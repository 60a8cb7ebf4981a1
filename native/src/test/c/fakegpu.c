/*
 * A fake GPU runtime for TierKV's binding tests: the HIP and CUDA runtime symbols TierKV binds,
 * implemented over malloc on the host, with the real out-parameter and error-code conventions.
 *
 * "Device" memory is host memory recorded in an allocation table, so copies can check that the
 * caller passed device and host pointers in the right order for the copy kind, and frees can check
 * that a pointer was allocated by the matching call and is freed once. Copies run synchronously;
 * events record CLOCK_MONOTONIC.
 *
 * Test controls (exported, prefix fake_):
 *   fake_reset()                          forget everything, 1 device, 256 MiB, no failures
 *   fake_set_devices(api, count, rc, write)  what hip (api 0), cuda (1) or both (-1) *GetDeviceCount
 *                                         return; write=0 leaves *count unwritten
 *   fake_set_total_memory(bytes)          device capacity; malloc beyond it fails with code 2
 *   fake_fail_next(name, code)            the next call of `name` (neutral: "malloc", "memcpyAsync", ...)
 *                                         returns `code` without doing anything
 *   fake_set_event_pending(n)             the next n event queries return not-ready (600)
 *   fake_calls(name)                      how many times `name` was called (both APIs)
 *   fake_live_device_allocations() / fake_live_host_allocations() / fake_live_device_bytes()
 *   fake_live_streams() / fake_live_events()
 *
 * Build: gcc -shared -fPIC -O1 -o libfakegpu.so fakegpu.c -lpthread
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, INVALID_DEVICE_POINTER = 17,
       INVALID_MEMCPY_DIRECTION = 21, INSUFFICIENT_DRIVER = 35, NO_DEVICE = 100,
       INVALID_DEVICE = 101, INVALID_HANDLE = 400, NOT_READY = 600,
       ALREADY_REGISTERED = 712, NOT_REGISTERED = 713 };

enum kind { DEVICE = 1, HOST = 2, REGISTERED = 3 };

struct alloc { char *ptr; size_t size; enum kind kind; struct alloc *next; };
struct stream { uint32_t magic; };
struct event { uint32_t magic; int recorded; struct timespec at; };
#define STREAM_MAGIC 0x57EA3u
#define EVENT_MAGIC 0xE7E47u

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *allocs;
/* Index 0: HIP, 1: CUDA. */
static int device_count[2] = {1, 1}, count_rc[2] = {OK, OK}, count_write[2] = {1, 1};
static int current_device = 0;
static size_t total_memory = 256u << 20, used_memory;
static char fail_name[64];
static int fail_code;
static int event_pending;
static long live_streams, live_events;

#define MAX_COUNTERS 64
static struct { char name[32]; long calls; } counters[MAX_COUNTERS];

/* Counts the call and returns the injected failure code for it, or OK. Holds the lock. */
static int enter(const char *name) {
    int i;
    for (i = 0; i < MAX_COUNTERS && counters[i].name[0]; i++) {
        if (strcmp(counters[i].name, name) == 0) break;
    }
    if (i < MAX_COUNTERS) {
        if (!counters[i].name[0]) strncpy(counters[i].name, name, sizeof counters[i].name - 1);
        counters[i].calls++;
    }
    if (fail_name[0] && strcmp(fail_name, name) == 0) {
        fail_name[0] = 0;
        return fail_code;
    }
    return OK;
}

static struct alloc *find_exact(const void *p, enum kind kind) {
    for (struct alloc *a = allocs; a; a = a->next)
        if (a->ptr == p && a->kind == kind) return a;
    return NULL;
}

/* The allocation of `kind` that holds [p, p + n), or NULL. */
static struct alloc *find_range(const void *p, size_t n, enum kind kind) {
    const char *c = p;
    for (struct alloc *a = allocs; a; a = a->next)
        if (a->kind == kind && c >= a->ptr && c <= a->ptr + a->size && n <= (size_t) (a->ptr + a->size - c))
            return a;
    return NULL;
}

static int is_device(const void *p, size_t n) { return find_range(p, n, DEVICE) != NULL; }

static void unlink_alloc(struct alloc *gone) {
    for (struct alloc **a = &allocs; *a; a = &(*a)->next)
        if (*a == gone) { *a = gone->next; free(gone); return; }
}

static int add_alloc(char *p, size_t size, enum kind kind) {
    struct alloc *a = malloc(sizeof *a);
    if (!a) return OUT_OF_MEMORY;
    a->ptr = p; a->size = size; a->kind = kind; a->next = allocs; allocs = a;
    return OK;
}

#define LOCKED(name) int rc_; pthread_mutex_lock(&lock); rc_ = enter(name); \
    if (rc_ != OK) { pthread_mutex_unlock(&lock); return rc_; }
#define RETURN(v) do { int r_ = (v); pthread_mutex_unlock(&lock); return r_; } while (0)

static int impl_getDeviceCount(int *count, int cuda) {
    LOCKED("getDeviceCount");
    if (!count) RETURN(INVALID_VALUE);
    if (count_write[cuda]) *count = count_rc[cuda] == OK ? device_count[cuda] : 0;
    RETURN(count_rc[cuda]);
}
static int impl_setDevice(int id) {
    LOCKED("setDevice");
    if (id < 0 || id >= device_count[0] + device_count[1]) RETURN(INVALID_DEVICE);
    current_device = id;
    RETURN(OK);
}
static int impl_getDevice(int *id) {
    LOCKED("getDevice");
    if (!id) RETURN(INVALID_VALUE);
    *id = current_device;
    RETURN(OK);
}
static int impl_malloc(void **ptr, size_t size) {
    LOCKED("malloc");
    if (!ptr) RETURN(INVALID_VALUE);
    *ptr = NULL;
    if (size > total_memory - used_memory) RETURN(OUT_OF_MEMORY);
    char *p = NULL;
    if (posix_memalign((void **) &p, 256, size ? size : 1) != 0) RETURN(OUT_OF_MEMORY);
    if (add_alloc(p, size, DEVICE) != OK) { free(p); RETURN(OUT_OF_MEMORY); }
    memset(p, 0, size); /* zeroed, unlike a real device, so tests can see what a copy did not write */
    used_memory += size;
    *ptr = p;
    RETURN(OK);
}
static int impl_free(void *ptr) {
    LOCKED("free");
    if (!ptr) RETURN(OK);
    struct alloc *a = find_exact(ptr, DEVICE);
    if (!a) RETURN(INVALID_VALUE); /* not a device allocation, or freed twice */
    used_memory -= a->size;
    free(a->ptr);
    unlink_alloc(a);
    RETURN(OK);
}
static int impl_hostMalloc(void **ptr, size_t size, unsigned flags) {
    LOCKED("hostMalloc");
    if (!ptr || flags > 0xF) RETURN(INVALID_VALUE);
    *ptr = NULL;
    char *p = NULL;
    if (posix_memalign((void **) &p, 4096, size ? size : 1) != 0) RETURN(OUT_OF_MEMORY);
    if (add_alloc(p, size, HOST) != OK) { free(p); RETURN(OUT_OF_MEMORY); }
    *ptr = p;
    RETURN(OK);
}
static int impl_hostFree(void *ptr) {
    LOCKED("hostFree");
    if (!ptr) RETURN(OK);
    struct alloc *a = find_exact(ptr, HOST);
    if (!a) RETURN(INVALID_VALUE);
    free(a->ptr);
    unlink_alloc(a);
    RETURN(OK);
}
static int impl_hostRegister(void *ptr, size_t size, unsigned flags) {
    LOCKED("hostRegister");
    (void) flags;
    if (!ptr || size == 0) RETURN(INVALID_VALUE);
    if (find_range(ptr, 1, REGISTERED)) RETURN(ALREADY_REGISTERED);
    RETURN(add_alloc(ptr, size, REGISTERED));
}
static int impl_hostUnregister(void *ptr) {
    LOCKED("hostUnregister");
    struct alloc *a = find_exact(ptr, REGISTERED);
    if (!a) RETURN(NOT_REGISTERED);
    unlink_alloc(a);
    RETURN(OK);
}
/* Checks the pointers against the kind: 1 host->device, 2 device->host, 3 device->device. */
static int copy_checked(void *dst, const void *src, size_t n, int kind) {
    if (!dst || !src) return INVALID_VALUE;
    int d = is_device(dst, n), s = is_device(src, n);
    switch (kind) {
    case 0: if (d || s) return INVALID_VALUE; break;
    case 1: if (!d || s) return INVALID_VALUE; break;
    case 2: if (d || !s) return INVALID_VALUE; break;
    case 3: if (!d || !s) return INVALID_VALUE; break;
    case 4: break;
    default: return INVALID_MEMCPY_DIRECTION;
    }
    memmove(dst, src, n);
    return OK;
}
static int valid_stream(const void *stream) {
    return stream == NULL || ((const struct stream *) stream)->magic == STREAM_MAGIC;
}
static int valid_event(const void *event) {
    return event != NULL && ((const struct event *) event)->magic == EVENT_MAGIC;
}
static int impl_memcpy(void *dst, const void *src, size_t n, int kind) {
    LOCKED("memcpy");
    RETURN(copy_checked(dst, src, n, kind));
}
static int impl_memcpyAsync(void *dst, const void *src, size_t n, int kind, void *stream) {
    LOCKED("memcpyAsync");
    if (!valid_stream(stream)) RETURN(INVALID_HANDLE);
    RETURN(copy_checked(dst, src, n, kind));
}
static int impl_memGetInfo(size_t *free_bytes, size_t *total_bytes) {
    LOCKED("memGetInfo");
    if (!free_bytes || !total_bytes) RETURN(INVALID_VALUE);
    *free_bytes = total_memory - used_memory;
    *total_bytes = total_memory;
    RETURN(OK);
}
static int impl_streamCreateWithFlags(void **stream, unsigned flags) {
    LOCKED("streamCreateWithFlags");
    if (!stream || flags > 1) RETURN(INVALID_VALUE);
    struct stream *s = malloc(sizeof *s);
    if (!s) RETURN(OUT_OF_MEMORY);
    s->magic = STREAM_MAGIC;
    *stream = s;
    live_streams++;
    RETURN(OK);
}
static int impl_streamSynchronize(void *stream) {
    LOCKED("streamSynchronize");
    RETURN(valid_stream(stream) ? OK : INVALID_HANDLE);
}
static int impl_streamDestroy(void *stream) {
    LOCKED("streamDestroy");
    if (!stream || !valid_stream(stream)) RETURN(INVALID_HANDLE);
    ((struct stream *) stream)->magic = 0;
    free(stream);
    live_streams--;
    RETURN(OK);
}
static int impl_eventCreate(void **event) {
    LOCKED("eventCreate");
    if (!event) RETURN(INVALID_VALUE);
    struct event *e = calloc(1, sizeof *e);
    if (!e) RETURN(OUT_OF_MEMORY);
    e->magic = EVENT_MAGIC;
    *event = e;
    live_events++;
    RETURN(OK);
}
static int impl_eventRecord(void *event, void *stream) {
    LOCKED("eventRecord");
    if (!valid_event(event) || !valid_stream(stream)) RETURN(INVALID_HANDLE);
    struct event *e = event;
    clock_gettime(CLOCK_MONOTONIC, &e->at);
    e->recorded = 1;
    RETURN(OK);
}
static int impl_eventSynchronize(void *event) {
    LOCKED("eventSynchronize");
    if (!valid_event(event)) RETURN(INVALID_HANDLE);
    event_pending = 0;
    RETURN(OK);
}
static int impl_eventQuery(void *event) {
    LOCKED("eventQuery");
    if (!valid_event(event)) RETURN(INVALID_HANDLE);
    if (event_pending > 0) { event_pending--; RETURN(NOT_READY); }
    RETURN(OK);
}
static int impl_eventElapsedTime(float *ms, void *start, void *stop) {
    LOCKED("eventElapsedTime");
    if (!ms) RETURN(INVALID_VALUE);
    if (!valid_event(start) || !valid_event(stop)) RETURN(INVALID_HANDLE);
    struct event *a = start, *b = stop;
    if (!a->recorded || !b->recorded) RETURN(INVALID_HANDLE);
    double d = (double) (b->at.tv_sec - a->at.tv_sec) * 1e3 + (double) (b->at.tv_nsec - a->at.tv_nsec) / 1e6;
    *ms = (float) d;
    RETURN(OK);
}
static int impl_eventDestroy(void *event) {
    LOCKED("eventDestroy");
    if (!valid_event(event)) RETURN(INVALID_HANDLE);
    ((struct event *) event)->magic = 0;
    free(event);
    live_events--;
    RETURN(OK);
}
static int impl_deviceSynchronize(void) {
    LOCKED("deviceSynchronize");
    RETURN(OK);
}
static int impl_runtimeGetVersion(int *v, int version) {
    LOCKED("runtimeGetVersion");
    if (!v) RETURN(INVALID_VALUE);
    *v = version;
    RETURN(OK);
}

static const char *error_name(int code, int cuda) {
    switch (code) {
    case OK: return cuda ? "cudaSuccess" : "hipSuccess";
    case INVALID_VALUE: return cuda ? "cudaErrorInvalidValue" : "hipErrorInvalidValue";
    case OUT_OF_MEMORY: return cuda ? "cudaErrorMemoryAllocation" : "hipErrorOutOfMemory";
    case INVALID_MEMCPY_DIRECTION: return cuda ? "cudaErrorInvalidMemcpyDirection" : "hipErrorInvalidMemcpyDirection";
    case INSUFFICIENT_DRIVER: return cuda ? "cudaErrorInsufficientDriver" : "hipErrorInsufficientDriver";
    case NO_DEVICE: return cuda ? "cudaErrorNoDevice" : "hipErrorNoDevice";
    case INVALID_DEVICE: return cuda ? "cudaErrorInvalidDevice" : "hipErrorInvalidDevice";
    case INVALID_HANDLE: return cuda ? "cudaErrorInvalidResourceHandle" : "hipErrorInvalidHandle";
    case NOT_READY: return cuda ? "cudaErrorNotReady" : "hipErrorNotReady";
    case ALREADY_REGISTERED: return cuda ? "cudaErrorHostMemoryAlreadyRegistered" : "hipErrorHostMemoryAlreadyRegistered";
    case NOT_REGISTERED: return cuda ? "cudaErrorHostMemoryNotRegistered" : "hipErrorHostMemoryNotRegistered";
    case 4242: return cuda ? "cudaErrorFake4242" : "hipErrorFake4242";
    default: return cuda ? "cudaErrorUnknown" : "hipErrorUnknown";
    }
}
static const char *error_string(int code) {
    switch (code) {
    case OK: return "no error";
    case INVALID_VALUE: return "invalid argument";
    case OUT_OF_MEMORY: return "out of memory";
    case INSUFFICIENT_DRIVER: return "CUDA driver version is insufficient for CUDA runtime version";
    case NO_DEVICE: return "no ROCm-capable device is detected";
    case NOT_READY: return "device not ready";
    default: return "fake error";
    }
}

#define API(P, HOSTALLOC, HOSTFREE, VERSION, CUDA) \
    int P##GetDeviceCount(int *c) { return impl_getDeviceCount(c, CUDA); } \
    int P##SetDevice(int d) { return impl_setDevice(d); } \
    int P##GetDevice(int *d) { return impl_getDevice(d); } \
    int P##Malloc(void **p, size_t n) { return impl_malloc(p, n); } \
    int P##Free(void *p) { return impl_free(p); } \
    int HOSTALLOC(void **p, size_t n, unsigned f) { return impl_hostMalloc(p, n, f); } \
    int HOSTFREE(void *p) { return impl_hostFree(p); } \
    int P##HostRegister(void *p, size_t n, unsigned f) { return impl_hostRegister(p, n, f); } \
    int P##HostUnregister(void *p) { return impl_hostUnregister(p); } \
    int P##Memcpy(void *d, const void *s, size_t n, int k) { return impl_memcpy(d, s, n, k); } \
    int P##MemcpyAsync(void *d, const void *s, size_t n, int k, void *st) { return impl_memcpyAsync(d, s, n, k, st); } \
    int P##MemGetInfo(size_t *f, size_t *t) { return impl_memGetInfo(f, t); } \
    int P##StreamCreateWithFlags(void **s, unsigned f) { return impl_streamCreateWithFlags(s, f); } \
    int P##StreamSynchronize(void *s) { return impl_streamSynchronize(s); } \
    int P##StreamDestroy(void *s) { return impl_streamDestroy(s); } \
    int P##EventCreate(void **e) { return impl_eventCreate(e); } \
    int P##EventRecord(void *e, void *s) { return impl_eventRecord(e, s); } \
    int P##EventSynchronize(void *e) { return impl_eventSynchronize(e); } \
    int P##EventQuery(void *e) { return impl_eventQuery(e); } \
    int P##EventElapsedTime(float *ms, void *a, void *b) { return impl_eventElapsedTime(ms, a, b); } \
    int P##EventDestroy(void *e) { return impl_eventDestroy(e); } \
    int P##DeviceSynchronize(void) { return impl_deviceSynchronize(); } \
    const char *P##GetErrorName(int e) { return error_name(e, CUDA); } \
    const char *P##GetErrorString(int e) { return error_string(e); } \
    int P##RuntimeGetVersion(int *v) { return impl_runtimeGetVersion(v, VERSION); }

API(hip, hipHostMalloc, hipHostFree, 50221153, 0)
API(cuda, cudaHostAlloc, cudaFreeHost, 12040, 1)

/* ---- test controls ---- */

void fake_reset(void) {
    pthread_mutex_lock(&lock);
    while (allocs) {
        struct alloc *a = allocs;
        allocs = a->next;
        if (a->kind != REGISTERED) free(a->ptr);
        free(a);
    }
    for (int i = 0; i < 2; i++) { device_count[i] = 1; count_rc[i] = OK; count_write[i] = 1; }
    current_device = 0;
    total_memory = 256u << 20; used_memory = 0;
    fail_name[0] = 0; fail_code = 0; event_pending = 0;
    live_streams = 0; live_events = 0;
    memset(counters, 0, sizeof counters);
    pthread_mutex_unlock(&lock);
}
void fake_set_devices(int api, int count, int rc, int write_count) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < 2; i++) {
        if (api == -1 || api == i) { device_count[i] = count; count_rc[i] = rc; count_write[i] = write_count; }
    }
    pthread_mutex_unlock(&lock);
}
void fake_set_total_memory(size_t bytes) {
    pthread_mutex_lock(&lock);
    total_memory = bytes;
    pthread_mutex_unlock(&lock);
}
void fake_fail_next(const char *name, int code) {
    pthread_mutex_lock(&lock);
    strncpy(fail_name, name, sizeof fail_name - 1);
    fail_name[sizeof fail_name - 1] = 0;
    fail_code = code;
    pthread_mutex_unlock(&lock);
}
void fake_set_event_pending(int n) {
    pthread_mutex_lock(&lock);
    event_pending = n;
    pthread_mutex_unlock(&lock);
}
long fake_calls(const char *name) {
    long n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_COUNTERS && counters[i].name[0]; i++)
        if (strcmp(counters[i].name, name) == 0) n = counters[i].calls;
    pthread_mutex_unlock(&lock);
    return n;
}
static long count_kind(enum kind kind, int bytes) {
    long n = 0;
    pthread_mutex_lock(&lock);
    for (struct alloc *a = allocs; a; a = a->next)
        if (a->kind == kind) n += bytes ? (long) a->size : 1;
    pthread_mutex_unlock(&lock);
    return n;
}
long fake_live_device_allocations(void) { return count_kind(DEVICE, 0); }
long fake_live_device_bytes(void) { return count_kind(DEVICE, 1); }
long fake_live_host_allocations(void) { return count_kind(HOST, 0); }
long fake_live_streams(void) { long n; pthread_mutex_lock(&lock); n = live_streams; pthread_mutex_unlock(&lock); return n; }
long fake_live_events(void) { long n; pthread_mutex_lock(&lock); n = live_events; pthread_mutex_unlock(&lock); return n; }
