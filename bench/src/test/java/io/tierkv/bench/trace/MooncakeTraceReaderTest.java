package io.tierkv.bench.trace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.testing.SharedData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MooncakeTraceReaderTest {

    @TempDir
    Path dir;

    private Path write(String... lines) throws IOException {
        Path f = dir.resolve("t.jsonl");
        Files.write(f, List.of(lines));
        return f;
    }

    private TraceFormatException failure(String... lines) throws IOException {
        Path f = write(lines);
        return assertThrows(TraceFormatException.class, () -> MooncakeTraceReader.read(f));
    }

    @Test
    void theConversationTraceHasItsPublishedShape() {
        Path f = SharedData.require("traces/mooncake-fast25/conversation_trace.jsonl");
        List<TraceRequest> trace = MooncakeTraceReader.read(f);
        assertEquals(12_031, trace.size());
        TraceRequest first = trace.getFirst();
        assertEquals(0L, first.timestampMillis());
        assertEquals(6758, first.inputLength());
        assertEquals(500, first.outputLength());
        assertArrayEquals(LongStream.range(0, 14).toArray(), first.blockHashes());
        assertArrayEquals(new long[] {0, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27},
                trace.get(1).blockHashes());
        assertEquals(182_790, distinctBlocks(trace));
        assertEquals(12_035.0, trace.stream().mapToInt(TraceRequest::inputLength).average().orElseThrow(), 0.5);
        assertEquals(343.0, trace.stream().mapToInt(TraceRequest::outputLength).average().orElseThrow(), 0.5);
        assertTrue(trace.stream().allMatch(r -> r.blockHash(0) == 0L), "every request starts with block 0");
    }

    @Test
    void theSyntheticTraceHasItsPublishedShape() {
        Path f = SharedData.require("traces/mooncake-fast25/synthetic_trace.jsonl");
        List<TraceRequest> trace = MooncakeTraceReader.read(f);
        assertEquals(3_993, trace.size());
        assertEquals(43_924, distinctBlocks(trace));
        assertEquals(374, trace.stream().mapToInt(TraceRequest::blockCount).max().orElseThrow());
        assertEquals(15_325.0, trace.stream().mapToInt(TraceRequest::inputLength).average().orElseThrow(), 0.5);
    }

    static int distinctBlocks(List<TraceRequest> trace) {
        Set<Long> ids = new HashSet<>();
        for (TraceRequest r : trace) {
            for (int i = 0; i < r.blockCount(); i++) {
                ids.add(r.blockHash(i));
            }
        }
        return ids.size();
    }

    @Test
    void fieldsMayComeInAnyOrderUnknownFieldsAndBlankLinesAreSkipped() throws IOException {
        Path f = write(
                "{\"hash_ids\": [7, 8], \"output_length\": 3, \"extra\": {\"a\": [1, {}]}, \"input_length\": 600, \"timestamp\": 12.6}",
                "",
                "  ",
                "{\"timestamp\": 40, \"input_length\": 0, \"output_length\": 0, \"hash_ids\": []}");
        List<TraceRequest> trace = MooncakeTraceReader.read(f);
        assertEquals(List.of(new TraceRequest(13, 600, 3, new long[] {7, 8}),
                new TraceRequest(40, 0, 0, new long[0])), trace);
    }

    @Test
    void aMissingFieldIsNamedWithItsLine() throws IOException {
        var e = failure("{\"timestamp\": 0, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [1]}",
                "{\"timestamp\": 1, \"input_length\": 512, \"output_length\": 1}");
        assertEquals(2, e.line());
        assertEquals("hash_ids", e.field());
        assertTrue(e.getMessage().endsWith("t.jsonl:2: field 'hash_ids': missing "
                + "(required: timestamp, input_length, output_length, hash_ids)"), e.getMessage());
    }

    @Test
    void aValueOfTheWrongTypeIsNamed() throws IOException {
        var e = failure("{\"timestamp\": 0, \"input_length\": \"512\", \"output_length\": 1, \"hash_ids\": [1]}");
        assertEquals(1, e.line());
        assertEquals("input_length", e.field());
        assertTrue(e.getMessage().endsWith("field 'input_length': expected an integer token count, got a string"),
                e.getMessage());
    }

    @Test
    void aHashIdThatIsNotAnIntegerIsNamedWithItsIndex() throws IOException {
        var e = failure("{\"timestamp\": 0, \"input_length\": 1500, \"output_length\": 1, \"hash_ids\": [1, 2, 3.5]}");
        assertEquals("hash_ids", e.field());
        assertTrue(e.getMessage().endsWith("element 2: expected a 64-bit integer, got a fractional number"),
                e.getMessage());
    }

    @Test
    void theNumberOfHashIdsMustMatchTheInputLength() throws IOException {
        var e = failure("{\"timestamp\": 0, \"input_length\": 1025, \"output_length\": 1, \"hash_ids\": [1, 2]}");
        assertEquals("hash_ids", e.field());
        assertTrue(e.getMessage().endsWith(
                "expected 3 ids for input_length 1025 at 512 tokens per block, got 2"), e.getMessage());
    }

    @Test
    void negativeLengthsAndTimestampsAreRejected() throws IOException {
        assertEquals("output_length",
                failure("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": -4, \"hash_ids\": [1]}").field());
        assertEquals("timestamp",
                failure("{\"timestamp\": -1, \"input_length\": 1, \"output_length\": 4, \"hash_ids\": [1]}").field());
        assertEquals("input_length",
                failure("{\"timestamp\": 0, \"input_length\": 3000000000, \"output_length\": 4, \"hash_ids\": [1]}")
                        .field());
    }

    @Test
    void lengthsLongerThanAnyContextAndTooManyIdsAreRefusedWithTheBound() throws IOException {
        var input = failure("{\"timestamp\": 0, \"input_length\": 2000000000, \"output_length\": 1, \"hash_ids\": [1]}");
        assertEquals("input_length", input.field());
        assertTrue(input.getMessage().endsWith("too long: 2000000000 tokens (expected <= 16777216, longer than any "
                + "model's context)"), input.getMessage());
        assertEquals("output_length",
                failure("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 16777217, \"hash_ids\": [1]}")
                        .field());
        StringBuilder ids = new StringBuilder("0");
        for (int i = 1; i <= TraceReader.MAX_LENGTH_TOKENS / 512; i++) {
            ids.append(',').append(i);
        }
        var many = failure("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [" + ids + "]}");
        assertEquals("hash_ids", many.field());
        assertTrue(many.getMessage().endsWith("more than 32768 ids (expected at most ceil(16777216 / 512): the "
                + "longest input_length allowed)"), many.getMessage());
    }

    @Test
    void malformedJsonIsReportedForTheLineOrTheFieldBeingRead() throws IOException {
        var truncated = failure("{\"timestamp\": 0, \"input_length\": 5,");
        assertEquals("(line)", truncated.field());
        assertTrue(truncated.getMessage().contains("malformed JSON"), truncated.getMessage());
        var inArray = failure("{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, \"hash_ids\": [1,,]}");
        assertEquals("hash_ids", inArray.field());
        assertEquals("(line)", failure("[1, 2]").field());
        assertEquals("(line)",
                failure("{\"timestamp\": 0, \"input_length\": 0, \"output_length\": 0, \"hash_ids\": []} 7").field());
    }

    @Test
    void requestsAreReadOneLineAtATime() throws IOException {
        Path f = write("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [9]}",
                "not json");
        try (TraceReader r = TraceReader.open(f)) {
            assertTrue(r.hasNext());
            assertEquals(9L, r.next().blockHash(0)); // served before the bad line is read
            var e = assertThrows(TraceFormatException.class, r::hasNext);
            assertEquals(2, e.line());
        }
    }

    @Test
    void openChoosesTheReaderByExtension() throws IOException {
        Path f = write("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [9]}");
        try (TraceReader r = TraceReader.open(f)) {
            assertTrue(r instanceof MooncakeTraceReader);
            assertEquals(512, r.blockSizeTokens());
            assertEquals(f.toString(), r.source());
        }
        var e = assertThrows(IllegalArgumentException.class, () -> TraceReader.open(dir.resolve("x.txt")));
        assertTrue(e.getMessage().contains("expected a Mooncake .jsonl or an Azure LLM inference .csv file"));
    }

    @Test
    void closingTwiceIsHarmlessAndAClosedReaderIsEmpty() throws IOException {
        Path f = write("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [9]}");
        TraceReader r = new MooncakeTraceReader(f, 512);
        r.close();
        r.close();
        assertFalse(r.hasNext());
    }

    @Test
    void theBlockSizeIsValidated() {
        var e = assertThrows(IllegalArgumentException.class, () -> new MooncakeTraceReader(dir.resolve("a"), 0));
        assertEquals("blockSizeTokens: 0 (expected > 0)", e.getMessage());
    }

    @Test
    void aTraceRequestCopiesItsIdsAndComparesThemByValue() {
        long[] ids = {1, 2, 3};
        TraceRequest r = new TraceRequest(5, 1200, 7, ids);
        ids[0] = 99;
        assertEquals(1L, r.blockHash(0));
        r.blockHashes()[1] = 99;
        assertEquals(2L, r.blockHash(1));
        assertEquals(new TraceRequest(5, 1200, 7, new long[] {1, 2, 3}), r);
        assertEquals(new TraceRequest(5, 1200, 7, new long[] {1, 2, 3}).hashCode(), r.hashCode());
        assertEquals("inputLength: -1 (expected >= 0)",
                assertThrows(IllegalArgumentException.class, () -> new TraceRequest(0, -1, 0, new long[0]))
                        .getMessage());
    }
}
