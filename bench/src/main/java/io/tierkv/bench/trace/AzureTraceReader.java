package io.tierkv.bench.trace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Reads an Azure LLM inference trace (Patel et al., "Splitwise", ISCA 2024;
 * {@code data/AzureLLMInferenceTrace_*.csv} in {@code Azure/AzurePublicDataset}, CC-BY-4.0):
 *
 * <pre>
 * TIMESTAMP,ContextTokens,GeneratedTokens
 * 2023-11-16 18:17:03.9799600,4808,10
 * </pre>
 *
 * <ul>
 *   <li>{@code TIMESTAMP}: wall-clock arrival, {@code yyyy-MM-dd HH:mm:ss[.fraction]} (up to 9
 *       fractional digits), taken as UTC; reported as milliseconds since the first request (floor),
 *       and a row earlier than the previous one is rejected (the trace is in arrival order);
 *   <li>{@code ContextTokens}: prompt length, {@code GeneratedTokens}: answer length, integers
 *       from 0 to {@link TraceReader#MAX_LENGTH_TOKENS} (16,777,216; why: there).
 * </ul>
 * The header is required; its three columns may come in any order and names are matched exactly.
 *
 * <p>The trace has no prefix information, so every prompt block gets a new id: ids
 * {@code 0, 1, 2, ...} in trace order, {@code ceil(ContextTokens / blockSizeTokens)} per request
 * (the last block partial), and no block is ever shared. Read line by line; a bad row ends the read
 * with a {@link TraceFormatException} naming the file, the 1-based line number and the column.
 * Not thread-safe.
 */
public final class AzureTraceReader extends LineTraceReader {

    /** The column names of the published files. */
    public static final List<String> COLUMNS = List.of("TIMESTAMP", "ContextTokens", "GeneratedTokens");

    private static final DateTimeFormatter TIME = new DateTimeFormatterBuilder()
            .appendPattern("yyyy-MM-dd HH:mm:ss")
            .optionalStart()
            .appendFraction(ChronoField.NANO_OF_SECOND, 1, 9, true)
            .optionalEnd()
            .toFormatter();

    private final int timeColumn;
    private final int contextColumn;
    private final int generatedColumn;
    private final int columns;
    private long firstNanos = Long.MIN_VALUE;
    private long previousNanos = Long.MIN_VALUE;
    private long nextBlockId;

    /**
     * Opens an Azure trace and checks its header.
     *
     * @param file            the {@code .csv} file
     * @param blockSizeTokens tokens per synthesized block, {@code > 0}
     * @throws IllegalArgumentException if {@code blockSizeTokens} is not positive
     * @throws UncheckedIOException if the file cannot be opened or read
     * @throws TraceFormatException if the header is missing or lacks a column
     */
    public AzureTraceReader(Path file, int blockSizeTokens) {
        super(file, blockSizeTokens, "Azure");
        String header;
        try {
            header = in.readLine();
        } catch (IOException e) {
            close();
            throw new UncheckedIOException("cannot read " + source, e);
        }
        lineNumber = 1;
        if (header == null) {
            close();
            throw new TraceFormatException(source, 1, "(header)",
                    "empty file (expected the header " + String.join(",", COLUMNS) + ")", null);
        }
        List<String> names = List.of(stripBom(header).split(",", -1)).stream().map(String::strip).toList();
        int[] at = new int[COLUMNS.size()];
        for (int c = 0; c < at.length; c++) {
            at[c] = names.indexOf(COLUMNS.get(c));
            if (at[c] < 0) {
                close();
                throw new TraceFormatException(source, 1, COLUMNS.get(c),
                        "column missing from the header '" + header + "' (expected " + String.join(",", COLUMNS) + ")",
                        null);
            }
        }
        timeColumn = at[0];
        contextColumn = at[1];
        generatedColumn = at[2];
        columns = names.size();
    }

    /**
     * Reads a whole Azure trace at 512 tokens per block.
     *
     * @param file the {@code .csv} file
     * @return every request, in file order
     * @throws TraceFormatException for a bad header or row
     * @throws UncheckedIOException if the file cannot be read
     */
    public static List<TraceRequest> read(Path file) {
        return new AzureTraceReader(file, MOONCAKE_BLOCK_SIZE_TOKENS).readAll();
    }

    private static String stripBom(String s) {
        return !s.isEmpty() && s.charAt(0) == '\uFEFF' ? s.substring(1) : s;
    }

    @Override
    TraceRequest parse(String line) {
        String[] cells = line.split(",", -1);
        if (cells.length != columns) {
            throw new TraceFormatException(source, lineNumber, "(line)",
                    cells.length + " columns, expected " + columns + " as in the header", null);
        }
        long nanos = parseTime(cells[timeColumn].strip());
        int context = parseCount(cells[contextColumn].strip(), COLUMNS.get(1));
        int generated = parseCount(cells[generatedColumn].strip(), COLUMNS.get(2));
        if (firstNanos == Long.MIN_VALUE) {
            firstNanos = nanos;
        } else if (nanos < previousNanos) {
            throw new TraceFormatException(source, lineNumber, COLUMNS.get(0), "'" + cells[timeColumn].strip()
                    + "' is earlier than the previous row (expected arrival order)", null);
        }
        previousNanos = nanos;
        long[] ids = new long[(int) ((context + (long) blockSizeTokens - 1) / blockSizeTokens)];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = nextBlockId++;
        }
        return new TraceRequest(Math.floorDiv(nanos - firstNanos, 1_000_000L), context, generated, ids);
    }

    private long parseTime(String text) {
        try {
            var t = LocalDateTime.parse(text, TIME).toInstant(ZoneOffset.UTC);
            return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L), t.getNano());
        } catch (DateTimeParseException | ArithmeticException e) {
            throw new TraceFormatException(source, lineNumber, COLUMNS.get(0),
                    "'" + text + "' is not a time of the form yyyy-MM-dd HH:mm:ss.fffffff", e);
        }
    }

    private int parseCount(String text, String column) {
        int v;
        try {
            v = Integer.parseInt(text);
        } catch (NumberFormatException e) {
            if (text.matches("\\d+")) {
                throw new TraceFormatException(source, lineNumber, column, "too long: " + text
                        + " tokens (expected <= " + MAX_LENGTH_TOKENS + ", longer than any model's context)", null);
            }
            throw new TraceFormatException(source, lineNumber, column,
                    "'" + text + "' is not an integer token count", e);
        }
        if (v < 0) {
            throw new TraceFormatException(source, lineNumber, column, "negative: " + v + " (expected >= 0)", null);
        }
        if (v > MAX_LENGTH_TOKENS) {
            throw new TraceFormatException(source, lineNumber, column, "too long: " + v + " tokens (expected <= "
                    + MAX_LENGTH_TOKENS + ", longer than any model's context)", null);
        }
        return v;
    }
}
