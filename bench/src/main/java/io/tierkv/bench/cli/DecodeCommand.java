package io.tierkv.bench.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code tierkv decode}: placeholder. */
@Command(name = "decode", mixinStandardHelpOptions = true)
public final class DecodeCommand implements Callable<Integer> {
    /** Creates the command. */
    public DecodeCommand() {
    }

    @Override
    public Integer call() {
        return 0;
    }
}
