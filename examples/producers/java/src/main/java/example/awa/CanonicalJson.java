// Awa canonical JSON v1 (docs/contract.md §1) over Java values, and the BLAKE3 unique_key (§2).
package example.awa;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.bouncycastle.crypto.digests.Blake3Digest;

/**
 * Values: {@code null}, {@link Boolean}, {@link Long} and {@link BigInteger} (integers),
 * {@link Double} (floats), {@link String}, {@link List}, {@link Map} with String keys. A map
 * built with {@code put} keeps the last value of a repeated key, as the contract wants.
 */
final class CanonicalJson {
  static final int MAX_DEPTH = 128; // a value inside 128 containers is accepted, 129 refused
  private static final BigInteger I64_MIN = BigInteger.valueOf(Long.MIN_VALUE);
  private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

  /** A client-side refusal: the contract refuses the input and nothing is enqueued. */
  static final class Refusal extends Exception {
    private static final long serialVersionUID = 1L;
    final String code;

    Refusal(String code, String message) {
      super(message);
      this.code = code;
    }
  }

  private final StringBuilder out = new StringBuilder();

  private CanonicalJson() {}

  /** The canonical bytes of a value. */
  static byte[] encode(Object value) throws Refusal {
    CanonicalJson w = new CanonicalJson();
    w.value(value, 0);
    // Every string was checked for lone surrogates, so this UTF-8 encoding is lossless.
    return w.out.toString().getBytes(StandardCharsets.UTF_8);
  }

  private void value(Object v, int depth) throws Refusal {
    if (v == null) {
      out.append("null");
    } else if (v instanceof Boolean b) {
      out.append(b ? "true" : "false");
    } else if (v instanceof Long l) {
      out.append(l.longValue());
    } else if (v instanceof BigInteger i) {
      if (i.compareTo(I64_MIN) < 0 || i.compareTo(U64_MAX) > 0) {
        throw new Refusal("integer_out_of_range", "integer " + i + " is outside [-2^63, 2^64-1]");
      }
      out.append(i);
    } else if (v instanceof Double d) {
      out.append(formatFloat(d));
    } else if (v instanceof String s) {
      string(s);
    } else if (depth >= MAX_DEPTH) {
      throw new Refusal("too_deep", "args nest deeper than " + MAX_DEPTH + " arrays/objects");
    } else if (v instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) out.append(',');
        value(list.get(i), depth + 1);
      }
      out.append(']');
    } else if (v instanceof Map<?, ?> map) {
      List<String> keys = new ArrayList<>();
      for (Object k : map.keySet()) keys.add((String) k);
      // String.compareTo orders UTF-16 code units (U+1F980 before U+FFFF): sort by UTF-8 bytes.
      Comparator<String> order =
          (a, b) -> Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
      keys.sort(order);
      out.append('{');
      for (int i = 0; i < keys.size(); i++) {
        if (i > 0) out.append(',');
        string(keys.get(i));
        out.append(':');
        value(map.get(keys.get(i)), depth + 1);
      }
      out.append('}');
    } else {
      throw new IllegalArgumentException("canonical JSON: unsupported type " + v.getClass());
    }
  }

  private void string(String s) throws Refusal {
    out.append('"');
    for (int i = 0; i < s.length(); ) {
      int c = s.codePointAt(i);
      // getBytes(UTF_8) would turn a lone surrogate into '?': refuse it instead (ADR 0028).
      if (c >= Character.MIN_SURROGATE && c <= Character.MAX_SURROGATE) {
        throw new Refusal("lone_surrogate", "a string holds a lone UTF-16 surrogate");
      }
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", c)); // lowercase hex, as the contract says
          } else {
            out.appendCodePoint(c);
          }
        }
      }
      i += Character.charCount(c);
    }
    out.append('"');
  }

  private static String formatFloat(double d) {
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      return "null"; // NaN and the infinities have no JSON form
    }
    String sign = (Double.doubleToRawLongBits(d) < 0) ? "-" : "";
    String digits;
    int k;
    if (d == 0) {
      digits = "0";
      k = 1;
    } else {
      BigDecimal s = shortest(Math.abs(d));
      digits = s.unscaledValue().toString();
      k = digits.length() - s.scale(); // |d| = 0.d1d2... x 10^k
    }
    int n = digits.length();
    if (k - n >= 0 && k <= 16) return sign + digits + "0".repeat(k - n) + ".0";
    if (k > 0 && k <= 16) return sign + digits.substring(0, k) + "." + digits.substring(k);
    if (k > -5 && k <= 0) return sign + "0." + "0".repeat(-k) + digits;
    int x = k - 1;
    return sign + digits.charAt(0) + (n > 1 ? "." + digits.substring(1) : "") + "e" + (x >= 0 ? "+" : "-") + Math.abs(x);
  }

  /**
   * The shortest decimal that reads back as {@code d}; among those the nearest, ties to even.
   * JDK 17's Double.toString is not always shortest (JDK-4511638), so search by precision.
   */
  static BigDecimal shortest(double d) {
    BigDecimal exact = new BigDecimal(d);
    for (int p = 1; p <= 17; p++) {
      BigDecimal lo = exact.round(new MathContext(p, RoundingMode.FLOOR));
      BigDecimal hi = exact.round(new MathContext(p, RoundingMode.CEILING));
      boolean loOk = lo.doubleValue() == d;
      boolean hiOk = hi.doubleValue() == d;
      BigDecimal pick = null;
      if (loOk && hiOk) {
        int cmp = exact.subtract(lo).compareTo(hi.subtract(exact));
        if (cmp < 0) pick = lo;
        else if (cmp > 0) pick = hi;
        else pick = lo.unscaledValue().testBit(0) ? hi : lo; // an exact tie: the even last digit
      } else if (loOk) {
        pick = lo;
      } else if (hiOk) {
        pick = hi;
      }
      if (pick != null) return pick.stripTrailingZeros();
    }
    throw new IllegalStateException("no round-trip decimal within 17 digits for " + d);
  }

  /** The §2 pre-image: kind, then 0x00 and each present field (args: canonical bytes). */
  static byte[] uniquePreimage(String kind, String queue, byte[] args, Long periodBucket) {
    ByteBuffer b = ByteBuffer.allocate(kind.length() * 3 + (queue == null ? 0 : queue.length() * 3 + 1)
        + (args == null ? 0 : args.length + 1) + 9);
    b.put(kind.getBytes(StandardCharsets.UTF_8));
    if (queue != null) b.put((byte) 0).put(queue.getBytes(StandardCharsets.UTF_8));
    if (args != null) b.put((byte) 0).put(args);
    if (periodBucket != null) {
      b.put((byte) 0);
      b.order(ByteOrder.LITTLE_ENDIAN); // little-endian, whatever the machine's order
      b.putLong(periodBucket);
    }
    return Arrays.copyOf(b.array(), b.position());
  }

  /** unique_key = the first 16 bytes of BLAKE3(pre-image). */
  static byte[] uniqueKey(byte[] preimage) {
    Blake3Digest h = new Blake3Digest(256);
    h.update(preimage, 0, preimage.length);
    byte[] out = new byte[32];
    h.doFinal(out, 0);
    return Arrays.copyOf(out, 16);
  }
}
