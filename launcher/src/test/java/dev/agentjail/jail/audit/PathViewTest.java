package dev.agentjail.jail.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** How a record joins and writes a path: as text, {@code .} and repeated slashes dropped, {@code ..} kept. */
class PathViewTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            nullValues = "NULL",
            value = {
                "/usr/bin/cc | NULL | /usr/bin/cc",
                "/ | NULL | /",
                "// | NULL | /",
                "/a/./b//c/ | NULL | /a/b/c",
                "/a/. | NULL | /a",
                "/a/.. | NULL | /a/..",
                "/a/.b/..c/... | NULL | /a/.b/..c/...",
                "x | /p | /p/x",
                "x | /p/ | /p/x",
                "./x/ | /p | /p/x",
                ". | /p | /p",
                "../x | /p | /p/../x",
                "x | / | /x",
                "x | NULL | x",
                "x | ?odd | ?/x",
                "? | NULL | ?",
                "? | /p | /p/?",
                "/ä/ö | NULL | /ä/ö",
                "ä | /p | /p/ä",
            })
    void joinsAndCleansAsText(String given, String base, String expected) {
        assertEquals(expected, PathView.absolute(given, base));
    }

    @Test
    void anEmptyOrAbsentPathIsNamedAsTheSupervisorGaveIt() {
        assertEquals("", PathView.absolute("", "/p"));
        assertEquals("?", PathView.absolute(null, null));
    }

    @Test
    void aViewNamesPathsInTheProjectAndHomeRelatively() {
        PathView view = new PathView(Path.of("/work/proj"), Path.of("/home/u"));
        assertEquals("src/a.c", view.view("src/./a.c", "/work/proj"));
        assertEquals(".", view.view("/work/proj/", null));
        assertEquals("~/.cache/x", view.view("/home/u//.cache/x", null));
        assertEquals("/work/projx/a", view.view("/work/projx/a", null));
        assertEquals("./~a", view.view("~a", "/work/proj"));
    }
}
