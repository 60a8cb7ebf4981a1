/**
 * The remote tier's block store on Valkey/Redis (Lettuce), standalone or cluster:
 * {@link io.tierkv.remote.RemoteStore} and its options and statistics. Depends on core (the
 * tier-store SPI it implements), Lettuce and Netty; the tier manager wires it below the disk tier
 * ({@code KvBlockManager.builder(layout).remote(RemoteOptions.of(url))}).
 */
@SuppressWarnings("requires-automatic")
module io.tierkv.remote {
    requires transitive io.tierkv.core;
    requires lettuce.core;
    requires io.netty.buffer;
    requires io.netty.common;
    requires static com.google.errorprone.annotations; // @GuardedBy: compile time only

    exports io.tierkv.remote;
}
