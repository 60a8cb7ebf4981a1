package io.tierkv.bench.model;

import io.tierkv.core.testing.SharedData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The stories260K model, tokenizer and greedy oracle from {@code shared/data}, loaded once per JVM.
 * {@link #get()} skips the calling test on a fresh clone and fails it under CI=true.
 *
 * @param model     the weights
 * @param tokenizer the tokenizer
 * @param oracle    the parsed {@code oracle_greedy.json}
 */
record Stories260K(LlamaModel model, Tokenizer tokenizer, Map<?, ?> oracle) {

    /** Loaded on first use. */
    private static Stories260K loaded;

    /**
     * Loads the data once; skips (or, under CI, fails) the calling test when it is absent.
     *
     * @return the data
     * @throws IOException when a file cannot be read
     */
    static synchronized Stories260K get() throws IOException {
        Path dir = SharedData.require("models/stories260K");
        if (loaded == null) {
            LlamaModel model = LlamaModel.load(dir.resolve("stories260K.bin"));
            Tokenizer tokenizer = Tokenizer.load(dir.resolve("tok512.bin"), model.config().vocabSize());
            Map<?, ?> oracle = (Map<?, ?>) MiniJson.parse(Files.readString(dir.resolve("oracle_greedy.json")));
            loaded = new Stories260K(model, tokenizer, oracle);
        }
        return loaded;
    }

    /**
     * Returns greedy_from_bos.start_token.
     *
     * @return the value
     */
    int startToken() {
        return (int) (double) (Double) MiniJson.at(oracle, "greedy_from_bos", "start_token");
    }

    /**
     * Returns greedy_from_bos.steps.
     *
     * @return the value
     */
    int steps() {
        return (int) (double) (Double) MiniJson.at(oracle, "greedy_from_bos", "steps");
    }

    /**
     * Returns greedy_from_bos.ids.
     *
     * @return the value
     */
    int[] greedyIds() {
        return MiniJson.ints(MiniJson.at(oracle, "greedy_from_bos", "ids"));
    }

    /**
     * Returns greedy_from_bos.text.
     *
     * @return the value
     */
    String greedyText() {
        return (String) MiniJson.at(oracle, "greedy_from_bos", "text");
    }

    /**
     * Returns first_positions_from_bos.
     *
     * @return the value
     */
    List<?> firstPositions() {
        return (List<?>) MiniJson.at(oracle, "first_positions_from_bos");
    }

    /**
     * Returns prompt_case.prompt.
     *
     * @return the value
     */
    String prompt() {
        return (String) MiniJson.at(oracle, "prompt_case", "prompt");
    }

    /**
     * Returns prompt_case.prompt_ids_with_bos.
     *
     * @return the value
     */
    int[] promptIds() {
        return MiniJson.ints(MiniJson.at(oracle, "prompt_case", "prompt_ids_with_bos"));
    }

    /**
     * Returns prompt_case.greedy_next_64.
     *
     * @return the value
     */
    int[] promptNext() {
        return MiniJson.ints(MiniJson.at(oracle, "prompt_case", "greedy_next_64"));
    }

    /**
     * Returns prompt_case.text.
     *
     * @return the value
     */
    String promptText() {
        return (String) MiniJson.at(oracle, "prompt_case", "text");
    }
}
