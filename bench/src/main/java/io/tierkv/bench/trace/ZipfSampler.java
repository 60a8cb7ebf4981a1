package io.tierkv.bench.trace;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Draws ranks {@code 0..n-1} with {@code P(k) ~ 1/(k+1)^s} by inverse CDF: a table of {@code n}
 * cumulative probabilities built once, a binary search per draw (O(log n), no allocation).
 */
final class ZipfSampler {

    private final double[] cdf;

    /**
     * Builds the table.
     *
     * @param n        number of ranks, {@code > 0}
     * @param exponent Zipf exponent s, {@code >= 0}
     */
    ZipfSampler(int n, double exponent) {
        cdf = new double[n];
        double sum = 0;
        for (int k = 0; k < n; k++) {
            sum += 1.0 / Math.pow(k + 1, exponent);
            cdf[k] = sum;
        }
        for (int k = 0; k < n; k++) {
            cdf[k] /= sum;
        }
        cdf[n - 1] = 1.0;
    }

    /**
     * Draws a rank.
     *
     * @param rnd the source of randomness
     * @return a rank in {@code [0, n)}, 0 the most popular
     */
    int sample(SplittableRandom rnd) {
        double u = rnd.nextDouble();
        int i = Arrays.binarySearch(cdf, u);
        int k = i >= 0 ? i + 1 : -i - 1; // first entry > u
        return Math.min(k, cdf.length - 1);
    }
}
