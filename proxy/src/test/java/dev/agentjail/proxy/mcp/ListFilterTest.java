package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which lists a result holds: every list-shaped array, whatever else is there. */
class ListFilterTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "{\"tools\":[]}|tools/list",
                "{\"tools\":[],\"prompts\":[{\"name\":\"evil\"}]}|tools/list,prompts/list",
                "{\"prompts\":[],\"resources\":[],\"resourceTemplates\":[],\"tools\":[]}"
                        + "|tools/list,resources/templates/list,resources/list,prompts/list",
                "{\"content\":[],\"resources\":[{\"uri\":\"x\"}]}|resources/list",
                "{\"tools\":{},\"prompts\":\"x\"}|",
                "{\"content\":[]}|"
            })
    void everyListShapedArrayOfAResultIsFound(String result, String expected) throws Exception {
        Json.Obj message = (Json.Obj) JsonReader.parse(
                ("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" + result + "}").getBytes(StandardCharsets.UTF_8));
        List<String> lists = expected == null ? List.of() : List.of(expected.split(","));
        assertEquals(lists, ListFilter.listMethodsOf(message));
    }
}
