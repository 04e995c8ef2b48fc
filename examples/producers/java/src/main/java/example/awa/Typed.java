// Decodes the ADR 0002 typed values the runner sends as `args` into CanonicalJson's Java values.
package example.awa;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

final class Typed {
  private static final BigInteger LONG_MIN = BigInteger.valueOf(Long.MIN_VALUE);
  private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

  private Typed() {}

  static Object decode(JsonNode t) {
    String type = t.get("type").asText();
    switch (type) {
      case "null":
        return null;
      case "bool":
        return t.get("value").asBoolean();
      case "int": {
        // Decimal text: a long when it fits, else a BigInteger (2^63..2^64-1, range-checked later).
        BigInteger i = new BigInteger(t.get("value").asText());
        return i.compareTo(LONG_MIN) >= 0 && i.compareTo(LONG_MAX) <= 0 ? (Object) i.longValue() : i;
      }
      case "float":
        return Double.longBitsToDouble(HexFormat.fromHexDigitsToLong(t.get("bits").asText()));
      case "string":
        return t.get("value").asText();
      case "array": {
        List<Object> out = new ArrayList<>();
        for (JsonNode x : t.get("value")) out.add(decode(x));
        return out;
      }
      case "object": {
        Map<String, Object> out = new HashMap<>();
        for (JsonNode m : t.get("value")) out.put(m.get(0).asText(), decode(m.get(1))); // last wins
        return out;
      }
      case "nested": {
        // The compact form of a deep chain: `depth` one-element arrays (or one-member objects).
        Object inner = decode(t.get("value"));
        for (int i = 0; i < t.get("depth").asInt(); i++) {
          if ("array".equals(t.get("container").asText())) {
            inner = new ArrayList<>(List.of(inner));
          } else {
            Map<String, Object> m = new HashMap<>();
            m.put(t.get("key").asText(), inner);
            inner = m;
          }
        }
        return inner;
      }
      default:
        throw new IllegalArgumentException("unknown typed value " + type);
    }
  }
}
