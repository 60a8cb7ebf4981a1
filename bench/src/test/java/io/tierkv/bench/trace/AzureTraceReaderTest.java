package io.tierkv.bench.trace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.testing.SharedData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AzureTraceReaderTest {

    @TempDir
    Path dir;

    private Path write(String... lines) throws IOException {
        Path f = dir.resolve("t.csv");
        Files.write(f, List.of(lines));
        return f;
    }

    private TraceFormatException failure(String... lines) throws IOException {
        Path f = write(lines);
        return assertThrows(TraceFormatException.class, () -> AzureTraceReader.read(f));
    }

    @Test
    void theConversationTraceReadsWithUniqueBlocksAndRelativeTimes() {
        Path f = SharedData.require("traces/azure-llm-2023/AzureLLMInferenceTrace_conv.csv");
        List<TraceRequest> trace = AzureTraceReader.read(f);
        assertEquals(19_366, trace.size());
        assertEquals(new TraceRequest(0, 374, 44, new long[] {0}), trace.get(0));
        // 18:15:50.9951690 - 18:15:46.6805900 = 4.314579 s
        assertEquals(new TraceRequest(4_314, 396, 109, new long[] {1}), trace.get(1));
        long blocks = 0;
        for (TraceRequest r : trace) {
            assertEquals((r.inputLength() + 511) / 512, r.blockCount());
            for (int i = 0; i < r.blockCount(); i++) {
                assertEquals(blocks++, r.blockHash(i), "ids are 0, 1, 2, ... in trace order");
            }
        }
        assertEquals(1_155.0, trace.stream().mapToInt(TraceRequest::inputLength).average().orElseThrow(), 0.5);
        assertEquals(14_050, trace.stream().mapToInt(TraceRequest::inputLength).max().orElseThrow());
    }

    @Test
    void theCodeTraceReads() {
        Path f = SharedData.require("traces/azure-llm-2023/AzureLLMInferenceTrace_code.csv");
        List<TraceRequest> trace = AzureTraceReader.read(f);
        assertEquals(8_819, trace.size());
        assertEquals(4808, trace.getFirst().inputLength());
        assertArrayEquals(new long[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, trace.getFirst().blockHashes());
        assertEquals(2_048.0, trace.stream().mapToInt(TraceRequest::inputLength).average().orElseThrow(), 0.5);
    }

    @Test
    void columnsMayComeInAnyOrderAndFractionsMayBeShort() throws IOException {
        Path f = write("GeneratedTokens,TIMESTAMP,ContextTokens",
                "10,2023-11-16 18:17:03.5,1024",
                "",
                "1,2023-11-16 18:17:04,0");
        List<TraceRequest> trace = AzureTraceReader.read(f);
        assertEquals(List.of(new TraceRequest(0, 1024, 10, new long[] {0, 1}),
                new TraceRequest(500, 0, 1, new long[0])), trace);
    }

    @Test
    void aMissingColumnIsNamed() throws IOException {
        var e = failure("TIMESTAMP,ContextTokens", "2023-11-16 18:17:03.5,1024");
        assertEquals(1, e.line());
        assertEquals("GeneratedTokens", e.field());
    }

    @Test
    void anEmptyFileHasNoHeader() throws IOException {
        var e = failure();
        assertEquals("(header)", e.field());
    }

    @Test
    void lengthsLongerThanAnyContextAreRefusedWithTheBound() throws IOException {
        String header = "TIMESTAMP,ContextTokens,GeneratedTokens";
        var context = failure(header, "2023-11-16 18:17:03.9799600,2000000000,10");
        assertEquals(2, context.line());
        assertEquals("ContextTokens", context.field());
        assertTrue(context.getMessage().endsWith("t.csv:2: field 'ContextTokens': too long: 2000000000 tokens "
                + "(expected <= 16777216, longer than any model's context)"), context.getMessage());
        var generated = failure(header, "2023-11-16 18:17:03.9799600,10,16777217");
        assertEquals("GeneratedTokens", generated.field());
        assertTrue(generated.getMessage().contains("too long: 16777217 tokens (expected <= 16777216"),
                generated.getMessage());
        assertTrue(failure(header, "2023-11-16 18:17:03.9799600,99999999999,1").getMessage()
                .contains("too long: 99999999999 tokens"));
        assertEquals(1, AzureTraceReader.read(write(header, "2023-11-16 18:17:03.9799600,16777216,1")).size());
    }

    @Test
    void badCellsAreNamedWithTheirLine() throws IOException {
        String header = "TIMESTAMP,ContextTokens,GeneratedTokens";
        String good = "2023-11-16 18:17:03.9799600,4808,10";
        var time = failure(header, good, "2023-11-16T18:17:03,1,1");
        assertEquals(3, time.line());
        assertEquals("TIMESTAMP", time.field());
        assertTrue(time.getMessage().endsWith("t.csv:3: field 'TIMESTAMP': '2023-11-16T18:17:03' is not a time "
                + "of the form yyyy-MM-dd HH:mm:ss.fffffff"), time.getMessage());
        var count = failure(header, good, "2023-11-16 18:17:04,12x,1");
        assertEquals("ContextTokens", count.field());
        assertTrue(count.getMessage().endsWith("'12x' is not an integer token count"), count.getMessage());
        assertEquals("GeneratedTokens", failure(header, good, "2023-11-16 18:17:04,12,-1").field());
        assertEquals("(line)", failure(header, good, "2023-11-16 18:17:04,12").field());
        var order = failure(header, good, "2023-11-16 18:17:02,12,1");
        assertEquals("TIMESTAMP", order.field());
        assertTrue(order.getMessage().contains("earlier than the previous row"), order.getMessage());
    }

    @Test
    void openReadsCsvAsAzure() throws IOException {
        Path f = write("TIMESTAMP,ContextTokens,GeneratedTokens", "2023-11-16 18:17:03.9799600,4808,10");
        try (TraceReader r = TraceReader.open(f)) {
            assertTrue(r instanceof AzureTraceReader);
            assertEquals(10, r.next().blockCount());
        }
    }
}
