package io.tierkv.remote;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ProtocolVersion;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One Lettuce connection, standalone or cluster, behind one {@link #dispatch} (every command the
 * store sends is dispatched with its own output, so the two kinds need no other difference; a
 * cluster connection routes each command by the slot of its first key).
 *
 * <p>Configured for a tier that must never stall its caller: commands time out after the call
 * timeout (Lettuce's timer, about 100 ms granularity, frees what the store's own precise timeout
 * gave up on); reconnects back off exponentially from 1 ms up to the configured delay; commands
 * issued while disconnected are rejected at once instead of queued; RESP2; a cluster connection
 * refreshes its topology on every adaptive trigger (MOVED, ASK, reconnect) and opens its
 * connections to every master when it opens.
 *
 * <p>Thread-safe (Lettuce's connections are).
 */
final class RemoteConnection implements AutoCloseable {

    private final ClientResources resources;
    private final AbstractRedisClient client;
    private final StatefulConnection<RemoteKey, RemoteValue> connection;
    private final BaseRedisAsyncCommands<RemoteKey, RemoteValue> commands;
    private final boolean cluster;

    private RemoteConnection(ClientResources resources, AbstractRedisClient client,
            StatefulConnection<RemoteKey, RemoteValue> connection, BaseRedisAsyncCommands<RemoteKey, RemoteValue> commands,
            boolean cluster) {
        this.resources = resources;
        this.client = client;
        this.connection = connection;
        this.commands = commands;
        this.cluster = cluster;
    }

    /**
     * Connects.
     *
     * @param options the store's options
     * @param codec   the store's codec
     * @return the connection
     * @throws RemoteUnavailableException if the first connection fails
     */
    static RemoteConnection open(RemoteOptions options, RemoteCodec codec) {
        RemoteEndpoints endpoints = RemoteEndpoints.parse(options.url());
        ClientResources resources = ClientResources.builder()
                .reconnectDelay(Delay.exponential(Duration.ofMillis(1), Duration.ofNanos(options.reconnectMaxDelayNanos()),
                        2, TimeUnit.NANOSECONDS))
                .build();
        List<RedisURI> uris = new ArrayList<>();
        for (RemoteEndpoints.Node node : endpoints.nodes()) {
            RedisURI uri = RedisURI.create(node.host(), node.port());
            // the handshake's timeout (HELLO/PING on every connect); commands time out by TimeoutOptions
            uri.setTimeout(Duration.ofNanos(options.connectTimeoutNanos()));
            uris.add(uri);
        }
        SocketOptions socket = SocketOptions.builder().connectTimeout(Duration.ofNanos(options.connectTimeoutNanos()))
                .keepAlive(true).build();
        TimeoutOptions timeouts = TimeoutOptions.enabled(Duration.ofNanos(options.timeoutNanos()));
        AbstractRedisClient client = null;
        try {
            if (endpoints.cluster()) {
                RedisClusterClient c = RedisClusterClient.create(resources, uris);
                client = c;
                c.setOptions(ClusterClientOptions.builder().autoReconnect(true)
                        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                        .protocolVersion(ProtocolVersion.RESP2).socketOptions(socket).timeoutOptions(timeouts)
                        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                                .enableAllAdaptiveRefreshTriggers().build())
                        .build());
                StatefulRedisClusterConnection<RemoteKey, RemoteValue> conn = c.connect(codec);
                // Node connections open lazily, and a command sent while its node's connection is
                // still opening would be refused (REJECT_COMMANDS): open every master's now.
                for (RedisClusterNode node : c.getPartitions()) {
                    if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                        conn.getConnection(node.getUri().getHost(), node.getUri().getPort());
                    }
                }
                return new RemoteConnection(resources, c, conn, conn.async(), true);
            }
            RedisClient c = RedisClient.create(resources, uris.getFirst());
            client = c;
            c.setOptions(ClientOptions.builder().autoReconnect(true)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .protocolVersion(ProtocolVersion.RESP2).socketOptions(socket).timeoutOptions(timeouts).build());
            StatefulRedisConnection<RemoteKey, RemoteValue> conn = c.connect(codec);
            return new RemoteConnection(resources, c, conn, conn.async(), false);
        } catch (RuntimeException e) {
            if (client != null) {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            resources.shutdown(0, 2, TimeUnit.SECONDS);
            throw new RemoteUnavailableException(options.url(), e);
        }
    }

    /** {@return whether this is a cluster connection} */
    boolean cluster() {
        return cluster;
    }

    /**
     * Sends one command without waiting.
     *
     * @param <T>    the output's result type
     * @param type   the command
     * @param output where its reply goes
     * @param args   its arguments (a cluster routes by the first key's slot)
     * @return the reply's future; it fails on timeout, disconnection or a server error (also when
     *         Lettuce refuses the command at once: the failure is never thrown here)
     */
    <T> RedisFuture<T> dispatch(CommandType type, CommandOutput<RemoteKey, RemoteValue, T> output,
            CommandArgs<RemoteKey, RemoteValue> args) {
        try {
            return commands.dispatch(type, output, args);
        } catch (RuntimeException e) {
            AsyncCommand<RemoteKey, RemoteValue, T> failed = new AsyncCommand<>(new Command<>(type, output, args));
            failed.completeExceptionally(e);
            return failed;
        }
    }

    /** Closes the connection, the client and its threads (waits up to about 2 s). */
    @Override
    public void close() {
        try {
            connection.close();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            resources.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }
}
