package io.tierkv.remote;

/** Who evicts remote blocks when the server's memory is full. */
public enum RemoteEviction {
    /**
     * The server: configure it with {@code maxmemory} and {@code maxmemory-policy allkeys-lru}
     * (Valkey's and Redis' approximated LRU, whose clock has 1 s resolution). The store sends no
     * extra commands. The default.
     */
    SERVER,
    /**
     * An exact LRU index owned by the store: a sorted set of block hashes scored by a logical
     * clock, touched on every hit and trimmed to {@link RemoteOptions#lruCapacityBlocks()} by a
     * Lua script, deterministic where a time-compressed replay needs it (see {@link RemoteStore}
     * for where the index lives in a cluster).
     */
    LRU
}
