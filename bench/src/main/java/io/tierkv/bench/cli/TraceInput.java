package io.tierkv.bench.cli;

import io.tierkv.bench.trace.AzureTraceReader;
import io.tierkv.bench.trace.GeneratorOptions;
import io.tierkv.bench.trace.MooncakeTraceReader;
import io.tierkv.bench.trace.SyntheticTraceGenerator;
import io.tierkv.bench.trace.TraceReader;
import io.tierkv.bench.trace.TraceRequest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The requests of a replay, loaded into memory (the published traces hold at most a few hundred
 * thousand block ids), with the block size their ids were cut at.
 *
 * @param requests         the requests in arrival order
 * @param traceBlockTokens tokens per trace block id
 * @param source           file path or generator description
 * @param format           {@code mooncake}, {@code azure} or {@code generator}
 */
public record TraceInput(List<TraceRequest> requests, int traceBlockTokens, String source, String format) {

    /** Trace formats. */
    public enum Format {
        /** Decide by the file's extension ({@code .jsonl} Mooncake, {@code .csv} Azure); no file: generator. */
        AUTO,
        /** Mooncake FAST'25 JSONL: ids per 512-token block. */
        MOONCAKE,
        /** Azure LLM inference CSV: lengths only; every block gets a new id. */
        AZURE,
        /** The built-in seeded multi-turn generator. */
        GENERATOR
    }

    /** Block size of the built-in generator and of Azure traces unless {@code --block-tokens} says otherwise. */
    public static final int DEFAULT_SMALL_BLOCK_TOKENS = 64;

    /**
     * The most requests {@code --requests} may ask for: 1,000,000. The requests are held in memory
     * before the replay or simulation starts, about 1 KiB each at the generator's default lengths
     * and 64-token blocks (4 KiB at 16), so 10<sup>6</sup> (42 times the longest published trace,
     * Mooncake's 23,608 requests) fits a heap of a few GiB, where 2<sup>31</sup> ran out of heap
     * after minutes of generating.
     */
    public static final int MAX_REQUESTS = 1_000_000;

    /**
     * Copies the list.
     */
    public TraceInput {
        requests = List.copyOf(requests);
    }

    /**
     * Resolves the format: AUTO becomes MOONCAKE, AZURE (by extension) or GENERATOR (no file).
     *
     * @param trace  the file, or null
     * @param format the requested format
     * @return a concrete format
     * @throws IllegalArgumentException for a missing file, an unknown extension or a file-less file format
     */
    public static Format resolve(Path trace, Format format) {
        if (trace != null) {
            Check.inputFile("--trace", trace, "a Mooncake .jsonl or an Azure .csv trace");
        }
        if (format != Format.AUTO) {
            if (trace == null && format != Format.GENERATOR) {
                throw new IllegalArgumentException("--format " + format.name().toLowerCase(Locale.ROOT)
                        + " (expected --trace FILE with it)");
            }
            return format;
        }
        if (trace == null) {
            return Format.GENERATOR;
        }
        String name = trace.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.endsWith(".jsonl") || name.endsWith(".json")) {
            return Format.MOONCAKE;
        }
        if (name.endsWith(".csv")) {
            return Format.AZURE;
        }
        throw new IllegalArgumentException("--trace " + trace + " (expected a Mooncake .jsonl or an Azure .csv file,"
                + " or --format)");
    }

    /**
     * The default manager block size for a format: 512 for Mooncake (its ids' block size), 64
     * for the generator and Azure (their ids are cut at it). 64 rather than vLLM's 16: with the
     * tiny layout a move costs a copy-queue round trip whatever the block's size, so 16-token
     * blocks quadruple the moves of a replay for the same traffic; use {@code --block-tokens 16}
     * for vLLM's granularity.
     *
     * @param format a concrete format
     * @return tokens per block
     */
    public static int defaultBlockTokens(Format format) {
        return format == Format.MOONCAKE ? TraceReader.MOONCAKE_BLOCK_SIZE_TOKENS : DEFAULT_SMALL_BLOCK_TOKENS;
    }

    /**
     * Checks a {@code --block-tokens} given on the command line against the format: at least 1;
     * for Mooncake a divisor of 512 (its ids are per 512 tokens); for the generator a power of two
     * (its prompt and document lengths are cut at it).
     *
     * @param format      a concrete format
     * @param blockTokens the value given
     * @return the value
     * @throws IllegalArgumentException naming {@code --block-tokens}, the value and the bound
     */
    public static int checkBlockTokens(Format format, int blockTokens) {
        Check.atLeast("--block-tokens", blockTokens, 1);
        int mooncake = TraceReader.MOONCAKE_BLOCK_SIZE_TOKENS;
        if (format == Format.MOONCAKE && mooncake % blockTokens != 0) {
            throw new IllegalArgumentException("--block-tokens " + blockTokens + " (expected a divisor of " + mooncake
                    + " for a Mooncake trace, whose ids are per " + mooncake + " tokens)");
        }
        if (format == Format.GENERATOR && Integer.bitCount(blockTokens) != 1) {
            throw new IllegalArgumentException("--block-tokens " + blockTokens + " (expected a power of two for the "
                    + "generator, such as 16, 32 or 64)");
        }
        return blockTokens;
    }

    /**
     * Checks a {@code --requests} given on the command line.
     *
     * @param requests the value given, or null when absent
     * @return the value, or -1 (all of a file, the generator's default) when absent
     * @throws IllegalArgumentException naming {@code --requests}, the value and the bound
     */
    public static int checkRequests(Integer requests) {
        return requests == null ? -1 : (int) Check.between("--requests", requests, 1, MAX_REQUESTS,
                "the requests are held in memory");
    }

    /**
     * Loads requests.
     *
     * @param trace       the file, or null for the generator
     * @param format      a concrete format
     * @param blockTokens the manager's block size: Azure and generator ids are cut at it; a
     *                    Mooncake trace keeps 512 (the manager's block size must divide it)
     * @param limit       most requests to take (the first ones), at most {@link #MAX_REQUESTS}, or -1
     *                    for all; for the generator the number generated
     * @param seed        the generator's seed
     * @return the input
     * @throws IllegalArgumentException if the trace holds no request
     */
    public static TraceInput load(Path trace, Format format, int blockTokens, int limit, long seed) {
        if (limit > MAX_REQUESTS) {
            throw new IllegalArgumentException("limit: " + limit + " (expected <= " + MAX_REQUESTS + ")");
        }
        TraceReader reader = switch (format) {
            case MOONCAKE -> new MooncakeTraceReader(trace, TraceReader.MOONCAKE_BLOCK_SIZE_TOKENS);
            case AZURE -> new AzureTraceReader(trace, blockTokens);
            case GENERATOR -> {
                GeneratorOptions o = generatorOptions(blockTokens, seed);
                yield new SyntheticTraceGenerator(limit > 0 ? o.withRequests(limit) : o);
            }
            case AUTO -> throw new IllegalArgumentException("format: AUTO (resolve it first)");
        };
        try (reader) {
            List<TraceRequest> out = new ArrayList<>();
            while (reader.hasNext() && (limit < 0 || out.size() < limit)) {
                out.add(reader.next());
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException("--trace " + trace + ": no requests (expected at least one "
                        + format.name().toLowerCase(Locale.ROOT) + " record)");
            }
            return new TraceInput(out, reader.blockSizeTokens(), reader.source(),
                    format.name().toLowerCase(Locale.ROOT));
        }
    }

    /**
     * The built-in workload of {@code tierkv replay} with no trace: the generator's defaults
     * ({@link GeneratorOptions#defaults()}) with 1,000 requests and ids cut at the block size.
     *
     * @param blockTokens tokens per block
     * @param seed        the seed
     * @return the options
     */
    public static GeneratorOptions generatorOptions(int blockTokens, long seed) {
        return GeneratorOptions.defaults().withBlockSizeTokens(blockTokens).withSeed(seed).withRequests(1_000);
    }
}
