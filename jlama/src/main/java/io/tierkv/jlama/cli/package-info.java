/**
 * {@code tierkv jlama}: stock Jlama against Jlama on TierKV, registered as a subcommand of the
 * {@code tierkv} command line (bench).
 */
package io.tierkv.jlama.cli;
