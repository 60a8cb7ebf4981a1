package io.tierkv.bench.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@link PolicySimulator} measured: one {@link Row} per (policy, capacity), plus the trace's
 * size. Immutable and thread-safe.
 *
 * @param requests       requests replayed
 * @param accesses       prompt block accesses per run (the same for every row)
 * @param distinctBlocks distinct block ids in the trace: the capacity beyond which nothing is evicted
 * @param rows           one row per capacity and policy, capacities in the order asked, the
 *                       {@value PolicySimulator#BELADY} baseline first within each capacity
 */
public record SimulationResult(int requests, long accesses, int distinctBlocks, List<Row> rows) {

    /**
     * One policy at one capacity.
     *
     * @param policy         policy name (a registry name, {@value PolicySimulator#BELADY} or
     *                       {@value PolicySimulator#RANDOM})
     * @param capacityBlocks capacity in blocks, as asked (capacities above
     *                       {@code distinctBlocks} behave as infinite)
     * @param accesses       prompt block lookups
     * @param hits           lookups that hit under prefix semantics (see {@link PolicySimulator})
     * @param hitRate        {@code hits / accesses}, 0 when there were no accesses
     */
    public record Row(String policy, long capacityBlocks, long accesses, long hits, double hitRate) {

        /**
         * Checks the counts.
         *
         * @throws IllegalArgumentException if hits are negative or exceed accesses
         */
        public Row {
            if (hits < 0 || hits > accesses) {
                throw new IllegalArgumentException("hits: " + hits + " (expected 0.." + accesses + ")");
            }
        }
    }

    /**
     * Copies the rows.
     *
     * @throws NullPointerException if {@code rows} is null
     */
    public SimulationResult {
        rows = List.copyOf(rows);
    }

    /**
     * The hit rate of one policy at one capacity.
     *
     * @param policy         the policy's name
     * @param capacityBlocks the capacity as asked
     * @return the hit rate in {@code [0, 1]}
     * @throws IllegalArgumentException if that pair was not simulated
     */
    public double hitRate(String policy, long capacityBlocks) {
        return row(policy, capacityBlocks).hitRate();
    }

    /**
     * The row of one policy at one capacity.
     *
     * @param policy         the policy's name
     * @param capacityBlocks the capacity as asked
     * @return the row
     * @throws IllegalArgumentException if that pair was not simulated
     */
    public Row row(String policy, long capacityBlocks) {
        for (Row r : rows) {
            if (r.policy().equals(policy) && r.capacityBlocks() == capacityBlocks) {
                return r;
            }
        }
        throw new IllegalArgumentException("no row for policy '" + policy + "' at " + capacityBlocks + " blocks");
    }

    /**
     * Renders the hit rates as a text table: one line per capacity, one column per policy, rates
     * in percent with two decimals, preceded by a line with the trace's size. For example:
     *
     * <pre>
     * requests 12031, block accesses 290000, distinct blocks 182790
     * capacity(blocks)   belady      lru  ...
     *             1953   12.34%    8.40%  ...
     * </pre>
     *
     * @return the table, lines ending in {@code \n}
     */
    public String toTable() {
        List<String> policies = new ArrayList<>();
        List<Long> capacities = new ArrayList<>();
        for (Row r : rows) {
            if (!policies.contains(r.policy())) {
                policies.add(r.policy());
            }
            if (!capacities.contains(r.capacityBlocks())) {
                capacities.add(r.capacityBlocks());
            }
        }
        int width = 8;
        for (String p : policies) {
            width = Math.max(width, p.length() + 1);
        }
        int capacityWidth = 16;
        for (long c : capacities) {
            capacityWidth = Math.max(capacityWidth, Long.toString(c).length());
        }
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "requests %d, block accesses %d, distinct blocks %d\n",
                requests, accesses, distinctBlocks));
        sb.append(String.format(Locale.ROOT, "%" + capacityWidth + "s", "capacity(blocks)"));
        for (String p : policies) {
            sb.append(String.format(Locale.ROOT, " %" + width + "s", p));
        }
        sb.append('\n');
        for (long c : capacities) {
            sb.append(String.format(Locale.ROOT, "%" + capacityWidth + "d", c));
            for (String p : policies) {
                String cell = "-";
                for (Row r : rows) {
                    if (r.capacityBlocks() == c && r.policy().equals(p)) {
                        cell = String.format(Locale.ROOT, "%.2f%%", 100.0 * r.hitRate());
                    }
                }
                sb.append(String.format(Locale.ROOT, " %" + width + "s", cell));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return toTable();
    }
}
