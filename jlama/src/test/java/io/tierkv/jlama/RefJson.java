package io.tierkv.jlama;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The prompt and greedy ids of a shipped model's {@code ref.json}. */
record RefJson(int[] prompt, int[] greedy) {

    static RefJson read(Path modelDir) {
        try {
            String s = Files.readString(modelDir.resolve("ref.json"));
            return new RefJson(ints(s, "prompt"), ints(s, "greedy"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int[] ints(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*\\[([^\\]]*)]").matcher(json);
        if (!m.find()) {
            throw new IllegalArgumentException("ref.json has no " + key);
        }
        return Arrays.stream(m.group(1).split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
    }
}
