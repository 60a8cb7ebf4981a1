package io.tierkv.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Guards the module boundary: core is JDK only (DESIGN.md modules table; STYLE.md item 14). */
class ArchitectureTest {

    @Test
    void coreImportsNothingFromNativeOrTiers() throws IOException {
        Path src = Path.of("src/main/java");
        assertTrue(Files.isDirectory(src), "run from the core module: " + src.toAbsolutePath());
        List<String> offenders;
        try (Stream<Path> files = Files.walk(src)) {
            offenders = files.filter(p -> p.toString().endsWith(".java")).filter(p -> {
                try {
                    // a qualified export ("exports io.tierkv.core.spi to io.tierkv.tiers") names a
                    // module that may read core, not one core depends on
                    String s = Files.readString(p).replaceAll("(?m)^\\s*exports [\\w.]+ to [\\w.,\\s]+;", "");
                    return s.contains("io.tierkv.natives") || s.contains("io.tierkv.tiers") || s.contains("io.tierkv.bench");
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).map(Path::toString).toList();
        }
        assertEquals(List.of(), offenders);
    }

    @Test
    void coreModuleRequiresOnlyJdkModules() throws IOException {
        Path info = Path.of("target/classes/module-info.class");
        assertTrue(Files.exists(info), "compiled module descriptor missing: " + info.toAbsolutePath());
        try (var in = Files.newInputStream(info)) {
            ModuleDescriptor d = ModuleDescriptor.read(in);
            assertEquals("io.tierkv.core", d.name());
            for (ModuleDescriptor.Requires r : d.requires()) {
                // Error Prone's annotations (@GuardedBy) are read by the compiler only: "requires
                // static", absent at run time
                boolean compileTimeOnly = r.name().equals("com.google.errorprone.annotations")
                        && r.modifiers().contains(ModuleDescriptor.Requires.Modifier.STATIC);
                assertTrue(r.name().startsWith("java.") || r.name().startsWith("jdk.") || compileTimeOnly,
                        "core requires " + r.name() + " " + r.modifiers());
            }
        }
    }
}
