/**
 * The remote tier's block store on Valkey/Redis (Lettuce), standalone or cluster:
 * {@link io.tierkv.remote.RemoteStore} and its options and statistics. Depends on Lettuce and
 * Netty only; the tier manager wires it below the disk tier.
 */
@SuppressWarnings("requires-automatic")
module io.tierkv.remote {
    requires lettuce.core;
    requires io.netty.buffer;
    requires io.netty.common;

    exports io.tierkv.remote;
}
