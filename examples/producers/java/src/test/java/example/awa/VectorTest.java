// Checks CanonicalJson against the frozen canonical_json and unique_key vectors.
package example.awa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

class VectorTest {
  private static final Path VECTORS = Path.of("..", "..", "..", "vectors");

  private static JsonNode load(String release, String family) throws IOException {
    return new ObjectMapper().readTree(VECTORS.resolve(release).resolve(family + ".json").toFile()).get("vectors");
  }

  private static String uniqueKeyHex(JsonNode in) throws CanonicalJson.Refusal {
    byte[] args = in.get("args").isNull() ? null : CanonicalJson.encode(Typed.decode(in.get("args")));
    JsonNode bucket = in.get("period_bucket");
    byte[] pre = CanonicalJson.uniquePreimage(in.get("kind").asText(),
        in.get("queue").isNull() ? null : in.get("queue").asText(), args,
        bucket.isNull() ? null : Long.parseLong(bucket.asText()));
    return HexFormat.of().formatHex(CanonicalJson.uniqueKey(pre));
  }

  @TestFactory
  List<DynamicTest> vectors() throws IOException {
    List<DynamicTest> tests = new ArrayList<>();
    for (String release : List.of("v1", "v1.1")) {
      for (JsonNode v : load(release, "canonical_json")) {
        JsonNode expected = v.get("expected");
        tests.add(DynamicTest.dynamicTest(release + " " + v.get("id").asText(), () -> {
          if (expected.has("error")) {
            var r = assertThrows(CanonicalJson.Refusal.class,
                () -> CanonicalJson.encode(Typed.decode(v.get("input").get("value"))));
            assertEquals(expected.get("error").asText(), r.code);
          } else {
            byte[] got = CanonicalJson.encode(Typed.decode(v.get("input").get("value")));
            assertEquals(expected.get("canonical_hex").asText(), HexFormat.of().formatHex(got));
          }
        }));
      }
      for (JsonNode v : load(release, "unique_key")) {
        JsonNode expected = v.get("expected");
        tests.add(DynamicTest.dynamicTest(release + " " + v.get("id").asText(), () -> {
          if (expected.has("error")) {
            var r = assertThrows(CanonicalJson.Refusal.class, () -> uniqueKeyHex(v.get("input")));
            assertEquals(expected.get("error").asText(), r.code);
          } else {
            assertEquals(expected.get("unique_key_hex").asText(), uniqueKeyHex(v.get("input")));
          }
        }));
      }
    }
    return tests;
  }
}
