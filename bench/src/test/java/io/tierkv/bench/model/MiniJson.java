package io.tierkv.bench.model;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A minimal JSON reader for the test oracles: objects, arrays, strings, numbers, literals. */
final class MiniJson {

    private final String s;
    private int i;

    private MiniJson(String s) {
        this.s = s;
    }

    /**
     * Parses a whole document.
     *
     * @param text the JSON text
     * @return maps, lists, strings, doubles, booleans and nulls
     */
    static Object parse(String text) {
        MiniJson p = new MiniJson(text);
        Object v = p.value();
        p.ws();
        if (p.i != text.length()) {
            throw p.error("trailing characters");
        }
        return v;
    }

    /**
     * Follows object keys to a nested value.
     *
     * @param root a parsed document
     * @param keys the keys, outermost first
     * @return the value
     */
    static Object at(Object root, String... keys) {
        Object v = root;
        for (String k : keys) {
            v = ((Map<?, ?>) v).get(k);
            if (v == null) {
                throw new IllegalArgumentException("no key " + k);
            }
        }
        return v;
    }

    /**
     * Converts a JSON array of integers.
     *
     * @param array a parsed array
     * @return its values
     */
    static int[] ints(Object array) {
        List<?> list = (List<?>) array;
        int[] out = new int[list.size()];
        for (int j = 0; j < out.length; j++) {
            out[j] = (int) (double) (Double) list.get(j);
        }
        return out;
    }

    private Object value() {
        ws();
        char c = s.charAt(i);
        switch (c) {
            case '{' -> {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                ws();
                if (s.charAt(i) == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    ws();
                    String k = string();
                    ws();
                    expect(':');
                    m.put(k, value());
                    ws();
                    if (s.charAt(i) == ',') {
                        i++;
                    } else {
                        expect('}');
                        return m;
                    }
                }
            }
            case '[' -> {
                i++;
                List<Object> l = new ArrayList<>();
                ws();
                if (s.charAt(i) == ']') {
                    i++;
                    return l;
                }
                while (true) {
                    l.add(value());
                    ws();
                    if (s.charAt(i) == ',') {
                        i++;
                    } else {
                        expect(']');
                        return l;
                    }
                }
            }
            case '"' -> {
                return string();
            }
            default -> {
                for (var lit : new Object[][] {{"true", true}, {"false", false}, {"null", null}}) {
                    if (s.startsWith((String) lit[0], i)) {
                        i += ((String) lit[0]).length();
                        return lit[1];
                    }
                }
                int start = i;
                while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                    i++;
                }
                if (start == i) {
                    throw error("unexpected character");
                }
                return Double.parseDouble(s.substring(start, i));
            }
        }
    }

    private String string() {
        expect('"');
        StringBuilder b = new StringBuilder();
        while (true) {
            char c = s.charAt(i++);
            if (c == '"') {
                return b.toString();
            }
            if (c != '\\') {
                b.append(c);
                continue;
            }
            char e = s.charAt(i++);
            switch (e) {
                case 'n' -> b.append('\n');
                case 't' -> b.append('\t');
                case 'r' -> b.append('\r');
                case 'b' -> b.append('\b');
                case 'f' -> b.append('\f');
                case 'u' -> {
                    b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                    i += 4;
                }
                default -> b.append(e); // \" \\ \/
            }
        }
    }

    private void ws() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
    }

    private void expect(char c) {
        if (s.charAt(i) != c) {
            throw error("expected '" + c + "'");
        }
        i++;
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException(what + " at offset " + i);
    }
}
