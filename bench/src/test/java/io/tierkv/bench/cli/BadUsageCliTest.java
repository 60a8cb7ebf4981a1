package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.testing.SharedData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Ordinary bad input (issue 16, items 3, 5 and 8), run as processes: each exits with the bad-usage
 * status 2 and prints one line that names the option as typed, the value and the bound, with no
 * stack trace and before any work (no summary line).
 */
class BadUsageCliTest {

    /** Creates the test. */
    BadUsageCliTest() {
    }

    private static void assertOneLine(CliProcess.Result r, String expected) {
        assertEquals(2, r.status(), r.output());
        String line = r.output().lines().filter(l -> l.startsWith("tierkv ")).findFirst().orElse("");
        assertTrue(line.contains(expected), "expected '" + expected + "' in:\n" + r.output());
        assertFalse(r.output().contains("Exception") || r.output().contains("\tat "), r.output());
        assertFalse(r.output().contains("hit rate") || r.output().contains("source:"), "no work:\n" + r.output());
    }

    /**
     * A bare {@code tierkv} is bad usage: the usage on stderr, status 2.
     *
     * @throws Exception on failure
     */
    @Test
    void bareTierkvPrintsUsageAndExitsTwo() throws Exception {
        CliProcess.Result r = CliProcess.run();
        assertEquals(2, r.status(), r.output());
        assertTrue(r.output().contains("a COMMAND is required") && r.output().contains("Usage: tierkv"), r.output());
    }

    /**
     * Numbers out of range, once accepted silently or ended in a stack trace, name the option.
     *
     * @param args     the command line, space-separated
     * @param expected the start of the message after {@code tierkv COMMAND: }
     * @throws Exception on failure
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "replay --block-tokens 0          | tierkv replay: --block-tokens 0 (expected >= 1)",
        "replay --block-tokens 48         | tierkv replay: --block-tokens 48 (expected a power of two for the generator",
        "replay --requests -3             | tierkv replay: --requests -3 (expected 1 <= N <= 1000000: the requests are held in memory)",
        "replay --requests 0              | tierkv replay: --requests 0 (expected 1 <= N <= 1000000: the requests are held in memory)",
        "replay --requests 2000000000     | tierkv replay: --requests 2000000000 (expected 1 <= N <= 1000000: the requests are held in memory)",
        "replay --layers 0                | tierkv replay: --layers 0 (expected >= 1)",
        "replay --kv-events tcp://*:99999 --requests 5 | tierkv replay: --kv-events tcp://*:99999 (expected a ZeroMQ endpoint",
        "restart-bench --block-bytes 0    | tierkv restart-bench: --block-bytes 0 (0 B; expected a multiple of 64 from 64 to 4194304: 16 F16 tokens of one head of blockBytes / 64 <= 65536 dims)",
        "restart-bench --block-bytes 8m   | tierkv restart-bench: --block-bytes 8m (8388608 B; expected a multiple of 64 from 64 to 4194304",
        "restart-bench --block-bytes 100  | tierkv restart-bench: --block-bytes 100 (100 B; expected a multiple of 64",
        "replay --movers -1               | tierkv replay: --movers -1 (expected 0 <= N <= 8)",
        "replay --nodes 0 --remote redis://127.0.0.1:1 | tierkv replay: --nodes 0 (expected 1 <= N <= 256)",
        "replay --nodes 4                 | tierkv replay: --nodes 4 without --remote (expected --remote URL",
        "replay --nodes 2 --remote redis://127.0.0.1:1 --route nearest | tierkv replay: --route 'nearest' (expected round-robin or prefix)",
        "replay --nodes 2 --remote redis://127.0.0.1:1 --remote-eviction lru | tierkv replay: --remote-eviction lru without --remote-capacity-tokens",
        "replay --nodes 2 --remote redis://127.0.0.1:1 --remote-capacity-tokens 1e6 | tierkv replay: --remote-capacity-tokens 1e6 with --remote-eviction server",
        "replay --nodes 2 --remote ftp://x:1 | tierkv replay: --remote ftp://x:1 (expected",
        "replay --nodes 2 --remote redis://127.0.0.1:1 --requests 5 | tierkv replay: --remote redis://127.0.0.1:1: the store is unavailable (",
        // --payload none is what the nodes do (the README's command gives it): only the store is missing here
        "replay --nodes 2 --remote redis://127.0.0.1:1 --payload none --requests 5 | tierkv replay: --remote redis://127.0.0.1:1: the store is unavailable (",
        "replay --remote redis://127.0.0.1:1 --requests 5 | tierkv replay: --remote redis://127.0.0.1:1: the store is unavailable (",
        "replay --remote redis://127.0.0.1:1 --single-tier | tierkv replay: --remote redis://127.0.0.1:1 with --single-tier (expected a host or disk tier",
        "replay --remote redis://127.0.0.1:1 --node-device-tokens 3e6 | tierkv replay: --node-device-tokens 3e6 without --nodes (expected --nodes N)",
        "replay --observe-ab --ab-pairs 0 --requests 5 | tierkv replay: --ab-pairs 0 (expected 1 <= N <= 100)",
        "replay --ab-pairs 3 --requests 5 | tierkv replay: --ab-pairs 3 (expected with --observe-ab)",
        "replay --observe-ab --sweep 1e4 --requests 5 | tierkv replay: --sweep with --observe-ab (expected one of them",
        "replay --single-tier --host-bytes 1m | tierkv replay: --host-bytes with --single-tier (expected without",
        "replay --single-tier --disk-dir /tmp/x | tierkv replay: --disk-dir with --single-tier (expected without",
        "replay --route prefix --requests 5 | tierkv replay: --route prefix without --nodes (expected --nodes N)",
        "replay --remote-capacity-tokens 1e6 | tierkv replay: --remote-capacity-tokens 1e6 without --remote (expected --remote URL)",
        "replay --remote-eviction bogus | tierkv replay: --remote-eviction bogus without --remote (expected --remote URL)",
        "replay --remote redis://127.0.0.1:1 --remote-eviction bogus | tierkv replay: --remote-eviction 'bogus' (expected server or lru)",
        "replay --remote redis://127.0.0.1:1 --remote-eviction lru | tierkv replay: --remote-eviction lru without --remote-capacity-tokens",
        "replay --remote redis://127.0.0.1:1 --remote-eviction lru --remote-capacity-tokens 1e6 --requests 5 | tierkv replay: --remote redis://127.0.0.1:1: the store is unavailable (",
        "replay --nodes 2 --remote redis://127.0.0.1:1 --metrics-port 0 | tierkv replay: --metrics-port with --nodes (expected without",
        "replay --nodes 2 --remote redis://127.0.0.1:1 --payload full | tierkv replay: --payload with --nodes (expected without: the multi-node replay's nodes are device-only LRU caches",
        "replay --nodes 2 --remote redis://127.0.0.1:1 --disk-dir /tmp/x | tierkv replay: --disk-dir with --nodes (expected without",
        "replay --movers 9                | tierkv replay: --movers 9 (expected 0 <= N <= 8)",
        "replay --recent-blocks -1        | tierkv replay: --recent-blocks -1 (expected >= 0)",
        "replay --device-tokens 3         | tierkv replay: --device-tokens 3 (2048 bytes; expected >= 3 blocks of 2048 bytes: --recent-blocks + 1)",
        "replay --speed -1                | tierkv replay: --speed -1 (expected >= 0)",
        "replay --sweep 1e4,0             | tierkv replay: --sweep 0 (expected >= 1)",
        "simulate --requests 0            | tierkv simulate: --requests 0 (expected 1 <= N <= 1000000: the requests are held in memory)",
        "simulate --requests 2000000000   | tierkv simulate: --requests 2000000000 (expected 1 <= N <= 1000000: the requests are held in memory)",
        "simulate --capacities 1e4,-1     | tierkv simulate: --capacities -1 (expected a count >= 1",
        "simulate --capacities 10         | tierkv simulate: --capacities 10 (expected >= 64 tokens: one block of this trace)",
        "simulate --capacities 64,100     | tierkv simulate: --capacities 64,100: both are 1 blocks of 64 tokens (expected capacities of different whole blocks)",
        "decode --block-tokens 0          | tierkv decode: --block-tokens 0 (expected >= 1)",
        "decode --block-tokens 100000     | tierkv decode: --block-tokens 100000 (",
        "replay --kv-heads 100000         | tierkv replay: --kv-heads 100000 (",
        "decode --device-blocks 0         | tierkv decode: --device-blocks 0 (expected >= 4)",
        "decode --recent-blocks 0 --device-blocks 1 | tierkv decode: --device-blocks 1 (expected >= 2)",
        "decode --recent-blocks -1        | tierkv decode: --recent-blocks -1 (expected >= 0)",
        "decode --host-blocks -1          | tierkv decode: --host-blocks -1 (expected >= 1)",
        "decode --warmup -1               | tierkv decode: --warmup -1 (expected >= 0)",
        "decode --runs 0                  | tierkv decode: --runs 0 (expected 1 <= N <= 100: measured rounds)",
        "decode --movers 9                | tierkv decode: --movers 9 (expected 0 <= N <= 8)",
        "soak --threads 0                 | tierkv soak: --threads 0 (expected 1 <= N <= 1024: platform threads)",
        "soak --threads 100000            | tierkv soak: --threads 100000 (expected 1 <= N <= 1024: platform threads)",
        "soak --corrupt-rate 2            | tierkv soak: --corrupt-rate 2 (expected 0 <= X <= 1)",
        "soak --device-blocks 1           | tierkv soak: --device-blocks 1 (expected >= 2)",
        "soak --duration 0s               | tierkv soak: --duration 0s (expected > 0",
        "soak --movers 9                  | tierkv soak: --movers 9 (expected 0 <= N <= 8)",
        "soak --recent-blocks -1          | tierkv soak: --recent-blocks -1 (expected >= 0)",
        "jlama --steps -1 --model-dir no-such-dir --prompt x | tierkv jlama: --steps -1 (expected >= 1)",
        "jlama --device-blocks 2 --model-dir no-such-dir --prompt x | tierkv jlama: --device-blocks 2 (expected >= 3: each session's 2 most recent blocks stay on the device, and one more is written)",
    })
    void numbersOutOfRangeNameTheOptionTheValueAndTheBound(String args, String expected) throws Exception {
        CliProcess.Result r = CliProcess.run(args.strip().split(" +"));
        assertOneLine(r, expected);
        assertFalse(r.output().contains(", movers") || r.output().contains("got "), "only the violated one:\n"
                + r.output());
    }

    /**
     * Text that is not a number, a size or a duration names the option as typed.
     *
     * @param args     the command line, space-separated
     * @param expected part of the message
     * @throws Exception on failure
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "replay --device-tokens abc | tierkv replay: --device-tokens abc (expected a count",
        "replay --host-bytes 12q    | tierkv replay: --host-bytes 12q (expected bytes",
        "replay --device-bytes 0x1p20 | tierkv replay: --device-bytes 0x1p20 (expected bytes >= 0 such as",
        "replay --host-bytes 4096d  | tierkv replay: --host-bytes 4096d (expected bytes >= 0 such as",
        "replay --host-bytes 0.7    | tierkv replay: --host-bytes 0.7 (expected a whole number of bytes; this is 0.7)",
        "replay --device-tokens 1.5 | tierkv replay: --device-tokens 1.5 (expected a whole count; this is 1.5)",
        "replay --device-bytes 1e99 | tierkv replay: --device-bytes 1e99 (expected a number of bytes <= 4611686018427387903)",
        "replay --device-tokens 1e99 | tierkv replay: --device-tokens 1e99 (expected a count <= 4611686018427387903)",
        "replay --disk-bytes -1m    | tierkv replay: --disk-bytes -1m (expected bytes",
        "decode --disk-bytes x      | tierkv decode: --disk-bytes x (expected bytes",
        "soak --duration x          | tierkv soak: --duration x (expected a duration",
        "soak --disk-bytes x        | tierkv soak: --disk-bytes x (expected bytes",
        "replay --layout foo        | tierkv replay: --layout 'foo' (expected one of [tiny",
        "replay --remote REDIS://127.0.0.1:6391:1 | tierkv replay: --remote REDIS://127.0.0.1:6391:1 (expected a host name or address (an IPv6 address in brackets, [::1]), got '127.0.0.1:6391')",
        "simulate --policies foo    | tierkv simulate: --policies foo: 'foo' is not known (valid: lru",
        "jlama --model-dir no-such-dir --prompt x | tierkv jlama: --model-dir no-such-dir: no config.json",
    })
    void unparsableValuesNameTheOption(String args, String expected) throws Exception {
        assertOneLine(CliProcess.run(args.strip().split(" +")), expected);
    }

    /**
     * Values picocli cannot parse and unknown options print one line (picocli's message, the enum's
     * values, where the usage is) with status 2, not the whole usage.
     *
     * @param args     the command line, space-separated
     * @param expected the line
     * @throws Exception on failure
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "replay --requests 2.5 | tierkv replay: Invalid value for option '--requests': '2.5' is not an int (see tierkv replay --help)",
        "replay --requests abc | tierkv replay: Invalid value for option '--requests': 'abc' is not an int (see tierkv replay --help)",
        "soak --compression zstd | tierkv soak: Invalid value for option '--compression': expected one of [NONE, LZ4] (case-insensitive) but was 'zstd' (see tierkv soak --help)",
        "decode --no-such-option | tierkv decode: Unknown option: '--no-such-option' (see tierkv decode --help)",
    })
    void typeErrorsAndUnknownOptionsPrintOneLine(String args, String expected) throws Exception {
        CliProcess.Result r = CliProcess.run(args.strip().split(" +"));
        assertEquals(2, r.status(), r.output());
        assertEquals(List.of(expected), r.output().lines().filter(l -> !l.startsWith("WARNING")).toList());
    }

    /**
     * An empty trace is an error for either format, as is a missing one.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void emptyOrMissingTracesAreErrorsForEitherFormat(@TempDir Path dir) throws Exception {
        Path jsonl = Files.createFile(dir.resolve("empty.jsonl"));
        assertOneLine(CliProcess.run("replay", "--trace", jsonl.toString(), "--no-progress"),
                "tierkv replay: --trace " + jsonl + ": no requests");
        assertOneLine(CliProcess.run("simulate", "--trace", jsonl.toString()),
                "tierkv simulate: --trace " + jsonl + ": no requests");
        Path csv = Files.createFile(dir.resolve("empty.csv"));
        CliProcess.Result r = CliProcess.run("replay", "--trace", csv.toString(), "--no-progress");
        assertEquals(2, r.status(), r.output());
        assertTrue(r.output().contains(csv.toString()), r.output());
        Path garbage = Files.writeString(dir.resolve("garbage.jsonl"), "garbage\n");
        r = CliProcess.run("replay", "--trace", garbage.toString(), "--no-progress");
        assertOneLine(r, "tierkv replay: " + garbage + ":1: field '(line)': malformed JSON: Unrecognized token");
        assertEquals(1, r.output().lines().filter(l -> !l.startsWith("WARNING")).count(), "one line, no parser dump:\n"
                + r.output());
        Path missing = dir.resolve("missing.jsonl");
        assertOneLine(CliProcess.run("replay", "--trace", missing.toString(), "--no-progress"),
                "tierkv replay: --trace " + missing + ": not found");
    }

    /**
     * A trace length longer than any model's context is refused with its file, line, field and
     * bound, where it once ran the replay out of heap.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void aTraceLengthLongerThanAnyContextIsRefusedWithTheBound(@TempDir Path dir) throws Exception {
        Path csv = Files.writeString(dir.resolve("huge.csv"),
                "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,2000000000,10\n");
        CliProcess.Result r = CliProcess.run("replay", "--trace", csv.toString(), "--payload", "none",
                "--no-progress");
        assertOneLine(r, "tierkv replay: " + csv + ":2: field 'ContextTokens': too long: 2000000000 tokens "
                + "(expected <= 16777216");
        assertFalse(r.output().contains("OutOfMemoryError"), r.output());
        Path jsonl = Files.writeString(dir.resolve("huge.jsonl"),
                "{\"timestamp\": 0, \"input_length\": 2000000000, \"output_length\": 1, \"hash_ids\": [1]}\n");
        assertOneLine(CliProcess.run("replay", "--trace", jsonl.toString(), "--payload", "none", "--no-progress"),
                "tierkv replay: " + jsonl + ":1: field 'input_length': too long: 2000000000 tokens");
    }

    /**
     * A soak whose device budget the machine cannot give, or whose disk directory cannot be
     * created, prints one line and not the run's header first.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void aSoakThatCannotRunPrintsOneLineAndNoHeader(@TempDir Path dir) throws Exception {
        CliProcess.Result r = CliProcess.run(List.of("-Djava.io.tmpdir=" + dir), "soak", "--device-blocks",
                "2000000000", "--duration", "1s");
        assertOneLine(r, "tierkv soak: --device-blocks 2000000000 (3.73 TiB) does not fit ");
        assertEquals(1, r.output().lines().filter(l -> !l.startsWith("WARNING")).count(), r.output());
        Path file = Files.writeString(dir.resolve("afile"), "x");
        String sub = file.resolve("sub").toString();
        r = CliProcess.run("soak", "--disk-dir", sub, "--duration", "1s");
        assertOneLine(r, "tierkv soak: --disk-dir " + sub + ": " + file + " is not a directory");
        assertEquals(1, r.output().lines().filter(l -> !l.startsWith("WARNING")).count(), r.output());
    }

    /**
     * A persistent directory written for another layout is refused naming {@code --disk-dir}, and
     * the advice is what the command line can do (a review: it said "set wipeOnLayoutMismatch",
     * a library option no command has).
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void aPersistentDirectoryOfAnotherLayoutSaysWhatTheCommandLineCanDo(@TempDir Path dir) throws Exception {
        String model = SharedData.require("models/jlama-random-d256").toString();
        String kv = dir.resolve("kv").toString();
        List<String> jvm = List.of("--add-modules", "jdk.incubator.vector"); // Jlama's kernels
        CliProcess.Result first = CliProcess.run(jvm, "jlama", "--model-dir", model, "--prompt", "Once upon a time", "--steps",
                "4", "--block-tokens", "4", "--disk-dir", kv, "--persistent");
        assertEquals(0, first.status(), first.output());
        CliProcess.Result r = CliProcess.run(jvm, "jlama", "--model-dir", model, "--prompt", "Once upon a time",
                "--steps", "4", "--block-tokens", "16", "--disk-dir", kv, "--persistent");
        assertOneLine(r, "tierkv jlama: --disk-dir " + kv + ": disk tier directory " + kv
                + " was written for another layout");
        assertTrue(r.output().contains("use another directory or delete its files (the library's"
                + " DiskOptions.withWipeOnLayoutMismatch has no option here)"), r.output());
    }

    /**
     * An output that cannot be written is refused before the run, not after it.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void unwritableOutputsAreRefusedBeforeTheRun(@TempDir Path dir) throws Exception {
        String nowhere = dir.resolve("no-such-dir").resolve("out").toString();
        assertOneLine(CliProcess.run("replay", "--report", nowhere, "--no-progress"),
                "tierkv replay: --report " + nowhere + ": directory ");
        assertOneLine(CliProcess.run("replay", "--report", dir.toString(), "--no-progress"),
                "tierkv replay: --report " + dir + ": is a directory");
        assertOneLine(CliProcess.run("replay", "--sweep", "1e4", "--sweep-csv", nowhere, "--no-progress"),
                "tierkv replay: --sweep-csv " + nowhere + ": directory ");
        assertOneLine(CliProcess.run("replay", "--sweep", "1e4", "--sweep-csv", dir.resolve("s.csv").toString(),
                "--plot", nowhere, "--no-progress"), "tierkv replay: --plot " + nowhere + ": directory ");
        assertOneLine(CliProcess.run("decode", "--check", nowhere), "tierkv decode: ");
        // Under a file: said so (it said "directory ... does not exist"), and replay names --disk-dir
        // as soak does (it said "directory: ... exists and is not a directory", from the library).
        Path file = Files.writeString(dir.resolve("afile"), "x");
        String underFile = file.resolve("r.json").toString();
        assertOneLine(CliProcess.run("replay", "--report", underFile, "--no-progress"),
                "tierkv replay: --report " + underFile + ": " + file + " is not a directory");
        assertOneLine(CliProcess.run("replay", "--disk-dir", file.toString(), "--no-progress"),
                "tierkv replay: --disk-dir " + file + ": " + file + " is not a directory");
    }

    /**
     * A missing model says "not found", what was looked for and where the model comes from.
     *
     * @param dir a temporary directory
     * @throws Exception on failure
     */
    @Test
    void aMissingModelSaysNotFoundWhatWasLookedForAndWhereItComesFrom(@TempDir Path dir) throws Exception {
        CliProcess.Result r = CliProcess.run("decode", "--model-dir", dir.toString());
        assertOneLine(r, "tierkv decode: --model-dir " + dir + ": stories260K.bin not found (looked for "
                + dir.toAbsolutePath().resolve("stories260K.bin"));
        assertTrue(r.output().contains("karpathy/tinyllamas"), r.output());
        Path ckpt = dir.resolve("model.bin");
        assertOneLine(CliProcess.run("decode", "--checkpoint", ckpt.toString()),
                "tierkv decode: --checkpoint " + ckpt + ": not found");
    }

    /**
     * Bounds that depend on the model (its vocabulary and context) and an oracle without a case for
     * the prompt are checked before decoding.
     *
     * @throws Exception on failure
     */
    @Test
    void boundsFromTheModelAndTheOracleAreCheckedBeforeDecoding() throws Exception {
        Path dir = SharedData.require("models/stories260K");
        assertOneLine(CliProcess.run("decode", "--model-dir", dir.toString(), "--parallel", "600"),
                "tierkv decode: --parallel 600 (expected 1 <= N <= 512: the model's vocabulary");
        assertOneLine(CliProcess.run("decode", "--model-dir", dir.toString(), "--steps", "600"),
                "tierkv decode: --steps 600 (expected 1 <= N <= 511: seq_len 512 - prompt 1 tokens)");
        assertOneLine(CliProcess.run("decode", "--model-dir", dir.toString(), "--check", "--prompt", "Hello"),
                "tierkv decode: --check " + dir.resolve("oracle_greedy.json") + ": no case for this prompt");
    }
}
