package io.tierkv.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which endpoints a publisher takes: {@code ipc://} is refused (JeroMQ would listen on a loopback
 * TCP port and create no socket file, so a libzmq consumer could not connect), a bound port the
 * system chose is reported, and the command line's options take {@code tcp://} only.
 */
class ZmqKvEventPublisherEndpointTest {

    @TempDir
    Path dir;

    @Test
    void ipcIsRefusedWithTheReasonAndNoFileOrPortIsLeft() {
        Path socket = dir.resolve("events.ipc");
        var e = assertThrows(IllegalArgumentException.class,
                () -> new ZmqKvEventPublisher("ipc://" + socket, "", 0, 0));
        assertTrue(e.getMessage().startsWith("kv-events endpoint: ipc://" + socket + " (expected tcp:// or inproc://"),
                e.getMessage());
        assertTrue(Files.notExists(socket));
    }

    @Test
    void aBoundPortTheSystemChoseIsReportedAndAConnectedEndpointHasNone() {
        try (ZmqKvEventPublisher bound = new ZmqKvEventPublisher("tcp://127.0.0.1:*", "", 0, 0)) {
            String at = bound.boundEndpoint();
            assertTrue(at.matches("tcp://127\\.0\\.0\\.1:\\d+"), at);
            assertTrue(Integer.parseInt(at.substring(at.lastIndexOf(':') + 1)) > 0, at);
        }
        try (ZmqKvEventPublisher connected = new ZmqKvEventPublisher("tcp://127.0.0.1:1", "", 0, 0)) {
            assertNull(connected.boundEndpoint());
        }
    }

    /**
     * Port 0 picks a free port when binding ({@code tcp://*:0}); a connected endpoint has no port
     * to pick. Before, {@code tcp://127.0.0.1:0} "connected" to port 0, every batch went nowhere,
     * and the command line printed {@code kv events at null}.
     */
    @Test
    void connectingToPortZeroIsRefusedAndBindingToItIsNot() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> new ZmqKvEventPublisher("tcp://127.0.0.1:0", "", 0, 0));
        assertEquals("kv-events endpoint: tcp://127.0.0.1:0 (expected a port to connect to: port 0 lets the system "
                + "choose one only when binding, as tcp://*:0 or tcp://127.0.0.1:* do)", e.getMessage());
        try (ZmqKvEventPublisher bound = new ZmqKvEventPublisher("tcp://*:0", "", 0, 0)) {
            String at = bound.boundEndpoint();
            assertTrue(Integer.parseInt(at.substring(at.lastIndexOf(':') + 1)) > 0, at);
        }
    }

    @Test
    void aPortInUseIsSaidInWords() {
        try (ZmqKvEventPublisher first = new ZmqKvEventPublisher("tcp://127.0.0.1:*", "", 0, 0)) {
            String taken = "tcp://*:" + first.boundEndpoint().substring(first.boundEndpoint().lastIndexOf(':') + 1);
            var e = assertThrows(IllegalArgumentException.class, () -> new ZmqKvEventPublisher(taken, "", 0, 0));
            assertTrue(e.getMessage().contains("): Address already in use (errno 48)"), e.getMessage());
        }
    }

    @Test
    void theCommandLineTakesTcpOnly() {
        for (String endpoint : new String[] {"ipc:///tmp/x.ipc", "inproc://events", "udp://x:1"}) {
            ObserveOptions o = new picocli.CommandLine(new Holder()).parseArgs("--kv-events", endpoint)
                    .commandSpec().commandLine().<Holder>getCommand().observe;
            var e = assertThrows(IllegalArgumentException.class, o::check);
            assertEquals("--kv-events " + endpoint + " (expected tcp://HOST:PORT: JeroMQ carries ipc:// over loopback "
                    + "TCP, which a libzmq consumer cannot reach, and inproc:// has no consumer outside this process)",
                    e.getMessage());
        }
    }

    /** A command holding the options, as the CLI's commands do. */
    @picocli.CommandLine.Command(name = "holder")
    static final class Holder {
        @picocli.CommandLine.Mixin
        ObserveOptions observe = new ObserveOptions();
    }
}
