package io.tierkv.bench.trace;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.NoSuchElementException;

/**
 * Reads a Mooncake trace: JSON Lines, one request per line, as published with the Mooncake paper
 * (Qin et al., FAST'25, appendix A; {@code FAST25-release/traces/*.jsonl} in
 * {@code kvcache-ai/Mooncake}):
 *
 * <pre>{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, ...]}</pre>
 *
 * <ul>
 *   <li>{@code timestamp}: arrival in milliseconds since the trace start, an integer or a number
 *       (rounded), {@code >= 0};
 *   <li>{@code input_length}, {@code output_length}: token counts, integers from 0 to
 *       {@link TraceReader#MAX_LENGTH_TOKENS} (16,777,216; why: there);
 *   <li>{@code hash_ids}: one chained prefix block id per {@code blockSizeTokens} prompt tokens
 *       (512 in the published traces), the last block usually partial, so exactly
 *       {@code ceil(input_length / blockSizeTokens)} integers.
 * </ul>
 * Other fields are skipped; blank lines are skipped; the four fields are required.
 *
 * <p>The file is read line by line and each line is parsed with Jackson's streaming parser, so
 * memory holds one line and one request at a time whatever the file's size. A bad line ends the
 * read with a {@link TraceFormatException} naming the file, the 1-based line number and the field.
 * Not thread-safe.
 */
public final class MooncakeTraceReader extends LineTraceReader {

    /** One factory per process: thread-safe, and cheap parsers come from it. */
    private static final JsonFactory JSON = JsonMapper.builder().build().getFactory();

    private static final String TIMESTAMP = "timestamp";
    private static final String INPUT_LENGTH = "input_length";
    private static final String OUTPUT_LENGTH = "output_length";
    private static final String HASH_IDS = "hash_ids";

    private final Path file;
    private long[] ids = new long[64];

    /**
     * Opens a Mooncake trace.
     *
     * @param file            the {@code .jsonl} file
     * @param blockSizeTokens tokens per block the hash ids were cut at, {@code > 0} (512 for the
     *                        published traces)
     * @throws IllegalArgumentException if {@code blockSizeTokens} is not positive
     * @throws UncheckedIOException if the file cannot be opened
     */
    public MooncakeTraceReader(Path file, int blockSizeTokens) {
        super(file, blockSizeTokens, "Mooncake");
        this.file = file;
    }

    /**
     * Reads a whole Mooncake trace at 512 tokens per block.
     *
     * @param file the {@code .jsonl} file
     * @return every request, in file order
     * @throws TraceFormatException for a bad line
     * @throws UncheckedIOException if the file cannot be read
     */
    public static java.util.List<TraceRequest> read(Path file) {
        return new MooncakeTraceReader(file, MOONCAKE_BLOCK_SIZE_TOKENS).readAll();
    }

    /**
     * The file being read.
     *
     * @return its path
     */
    public Path file() {
        return file;
    }

    @Override
    TraceRequest parse(String line) {
        long timestamp = -1;
        int input = -1;
        int output = -1;
        int idCount = -1;
        String field = "(line)";
        try (JsonParser p = JSON.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw bad(field, "expected a JSON object, got " + describe(p.currentToken()), null);
            }
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                field = p.currentName();
                JsonToken value = p.nextToken();
                switch (field) {
                    case TIMESTAMP -> timestamp = readTimestamp(p, value);
                    case INPUT_LENGTH -> input = readLength(p, value, field);
                    case OUTPUT_LENGTH -> output = readLength(p, value, field);
                    case HASH_IDS -> idCount = readIds(p, value);
                    default -> p.skipChildren();
                }
                field = "(line)";
            }
            if (t != JsonToken.END_OBJECT) {
                throw bad(field, "expected a field name or '}', got " + describe(t), null);
            }
            if (p.nextToken() != null) {
                throw bad(field, "unexpected " + describe(p.currentToken()) + " after the object", null);
            }
        } catch (JsonProcessingException e) {
            throw bad(field, "malformed JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot parse " + source + ":" + lineNumber, e);
        }
        if (timestamp < 0) {
            throw missing(TIMESTAMP);
        }
        if (input < 0) {
            throw missing(INPUT_LENGTH);
        }
        if (output < 0) {
            throw missing(OUTPUT_LENGTH);
        }
        if (idCount < 0) {
            throw missing(HASH_IDS);
        }
        long expected = (input + (long) blockSizeTokens - 1) / blockSizeTokens;
        if (idCount != expected) {
            throw bad(HASH_IDS, "expected " + expected + " ids for input_length " + input + " at "
                    + blockSizeTokens + " tokens per block, got " + idCount, null);
        }
        return new TraceRequest(timestamp, input, output, Arrays.copyOf(ids, idCount));
    }

    private long readTimestamp(JsonParser p, JsonToken value) throws IOException {
        long ms;
        if (value == JsonToken.VALUE_NUMBER_INT) {
            if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                throw bad(TIMESTAMP, "out of range: " + p.getText(), null);
            }
            ms = p.getLongValue();
        } else if (value == JsonToken.VALUE_NUMBER_FLOAT) {
            double d = p.getDoubleValue();
            if (!(d >= 0 && d < 9.0e18)) {
                throw bad(TIMESTAMP, "out of range: " + p.getText(), null);
            }
            ms = Math.round(d);
        } else {
            throw bad(TIMESTAMP, "expected a number of milliseconds, got " + describe(value), null);
        }
        if (ms < 0) {
            throw bad(TIMESTAMP, "negative: " + ms + " (expected >= 0)", null);
        }
        return ms;
    }

    private int readLength(JsonParser p, JsonToken value, String field) throws IOException {
        if (value != JsonToken.VALUE_NUMBER_INT) {
            throw bad(field, "expected an integer token count, got " + describe(value), null);
        }
        if (p.getNumberType() != JsonParser.NumberType.INT) {
            throw bad(field, "out of range: " + p.getText() + " (expected 0.." + MAX_LENGTH_TOKENS + ")", null);
        }
        int v = p.getIntValue();
        if (v < 0) {
            throw bad(field, "negative: " + v + " (expected >= 0)", null);
        }
        if (v > MAX_LENGTH_TOKENS) {
            throw bad(field, "too long: " + v + " tokens (expected <= " + MAX_LENGTH_TOKENS
                    + ", longer than any model's context)", null);
        }
        return v;
    }

    private int readIds(JsonParser p, JsonToken value) throws IOException {
        if (value != JsonToken.START_ARRAY) {
            throw bad(HASH_IDS, "expected an array of integers, got " + describe(value), null);
        }
        int n = 0;
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                throw bad(HASH_IDS, "element " + n + ": expected a 64-bit integer, got "
                        + (t == JsonToken.VALUE_NUMBER_INT ? p.getText() : describe(t)), null);
            }
            if (n == maxIds()) {
                throw bad(HASH_IDS, "more than " + n + " ids (expected at most ceil(" + MAX_LENGTH_TOKENS + " / "
                        + blockSizeTokens + "): the longest input_length allowed)", null);
            }
            if (n == ids.length) {
                ids = Arrays.copyOf(ids, n * 2);
            }
            ids[n++] = p.getLongValue();
        }
        return n;
    }

    /** The most ids a line may give: those of the longest input_length allowed. */
    private int maxIds() {
        return (int) ((MAX_LENGTH_TOKENS + (long) blockSizeTokens - 1) / blockSizeTokens);
    }

    private static String describe(JsonToken t) {
        if (t == null) {
            return "the end of the line";
        }
        return switch (t) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT -> "an integer";
            case VALUE_NUMBER_FLOAT -> "a fractional number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> t.asString() == null ? t.name() : "'" + t.asString() + "'";
        };
    }

    private TraceFormatException missing(String field) {
        return bad(field, "missing (required: timestamp, input_length, output_length, hash_ids)", null);
    }

    private TraceFormatException bad(String field, String detail, Throwable cause) {
        return new TraceFormatException(source, lineNumber, field, detail, cause);
    }
}
