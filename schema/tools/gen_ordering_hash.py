#!/usr/bin/env python3
"""Generate the block-unrolled ordering_key_hash64_i64 body embedded in 003_routing_functions.sql.

Why generated: the function multiplies each key byte by a 64-bit constant P^k mod 2^64 split
into 32-bit halves; writing those ~320 constants by hand would be error-prone. Re-run this and
paste its output between the BEGIN/END GENERATED markers in 003 if the layout ever changes
(the constants themselves are frozen by the released hash).

Math (all mod 2^64, P = 0x100000001b3, O = 0xcbf29ce484222325):
  released hash  H(k) = O*P^n + sum_i k[i]*P^(n-1-i)         (multiply-then-add loop)
  short keys     (< 64 bytes) run the released loop one byte per step, as ONE compact bigint
                 expression: H*P = H*435 + H*2^40, so with 32-bit halves
                 lo' = lo*435 + b, hi' = hi*435 + lo*256 + carry (all < 2^42, no overflow).
  zero padding   prefixing z zero bytes leaves the sum unchanged and turns O*P^n into
                 O*P^(n+z), so start from O*P^-z (P is odd, hence invertible mod 2^64) and
                 process a key whose length is a multiple of 64.
  blocks         H' = H*P^64 + sum_t b[t]*P^(63-t), one block per loop step.
  no overflow    state is (hi, lo) 32-bit halves in bigint; byte*half-weight < 2^40, a block
                 sum < 2^46; H*P^64 splits the 32-bit halves once more into 16-bit parts.

Why two paths: PL/pgSQL initialises every expression once per transaction at a cost of a
fraction of a microsecond per operator (the EXECUTE permission check of each function node),
so the ~400-operator block expressions only pay off on long keys. A short key touches only
the ~20-operator byte step.
"""

MASK64 = (1 << 64) - 1
P = 0x100000001B3
O = 0xCBF29CE484222325
BLOCK = 64
SHORT = 64  # keys shorter than this use the byte loop


def pw(k: int) -> int:
    return pow(P, k, 1 << 64)


def block_stmt(b: int, indent: str) -> str:
    q = pw(b)
    ql, qh = q & 0xFFFFFFFF, q >> 32
    q0, q1, r0, r1 = ql & 0xFFFF, ql >> 16, qh & 0xFFFF, qh >> 16

    def terms(part) -> str:
        items = [f"get_byte(v_b, {t}) * {part(pw(b - 1 - t))}::int8" for t in range(b)]
        lines = [" + ".join(items[i : i + 3]) for i in range(0, len(items), 3)]
        return (f"\n{indent}        + ").join(lines)

    lo_sum = terms(lambda w: w & 0xFFFFFFFF)
    hi_sum = terms(lambda w: w >> 32)
    return f"""{indent}v_b := substr(v_k, v_i + 1, {b});
{indent}-- lo(H * P^{b}) + lo block sum, with its carry still above bit 32
{indent}v_t := (v_lo & 65535) * {ql} + ((((v_lo >> 16) * {ql}) & 65535) << 16)
{indent}    + ({lo_sum});
{indent}-- hi(H * P^{b}) mod 2^32 + hi block sum + carry
{indent}v_hi := (v_hi * {q0} + (((v_hi * {q1}) & 65535) << 16)
{indent}    + v_lo * {r0} + (((v_lo * {r1}) & 65535) << 16)
{indent}    + (((v_lo >> 16) * {ql}) >> 16)
{indent}    + ({hi_sum})
{indent}    + (v_t >> 32)) & 4294967295;
{indent}v_lo := v_t & 4294967295;
{indent}v_i := v_i + {b};"""


def signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def main() -> None:
    pinv = pow(P, -1, 1 << 64)
    inits = [(O * pow(pinv, z, 1 << 64)) & MASK64 for z in range(BLOCK)]
    # Constant arrays fold to one Const: a subscript costs nothing to initialise.
    init_hi = ",".join(str(v >> 32) for v in inits)
    init_lo = ",".join(str(v & 0xFFFFFFFF) for v in inits)
    print(f"""CREATE OR REPLACE FUNCTION @schema@.ordering_key_hash64_i64(p_key bytea)
RETURNS bigint
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $fn$
DECLARE
    v_n  integer := octet_length(p_key);
    v_z  integer;
    v_k  bytea;
    v_b  bytea;
    v_i  integer := 0;
    v_t  bigint;
    v_h  bigint;
    v_hi bigint;
    v_lo bigint;
BEGIN
    IF v_n < {SHORT} THEN
        v_h := {signed(O)};  -- 0xcbf29ce484222325 as two's complement
        FOR v_i IN 0 .. v_n - 1 LOOP
            -- h*P + b mod 2^64 on (hi, lo) halves of v_h; P = 2^40 + 435.
            v_h := ((((((v_h >> 32) & 4294967295) * 435 + (v_h & 4294967295) * 256
                       + (((v_h & 4294967295) * 435 + get_byte(p_key, v_i)) >> 32))
                      & 4294967295) << 32)
                    | (((v_h & 4294967295) * 435 + get_byte(p_key, v_i)) & 4294967295));
        END LOOP;
        RETURN v_h;
    END IF;

    -- Long keys: pad to a multiple of {BLOCK} and start from O * P^-z (halves).
    v_z := ({BLOCK} - v_n % {BLOCK}) % {BLOCK};
    v_hi := ('{{{init_hi}}}'::bigint[])[v_z + 1];
    v_lo := ('{{{init_lo}}}'::bigint[])[v_z + 1];
    IF v_z = 0 THEN
        v_k := p_key;
    ELSE
        -- z zero bytes (decode, not a '\\x..' literal: see concurrency_digest).
        v_k := pg_catalog.decode(pg_catalog.repeat('00', v_z), 'hex') || p_key;
    END IF;
    v_n := v_n + v_z;
    WHILE v_i < v_n LOOP
{block_stmt(BLOCK, "        ")}
    END LOOP;
    -- Reassemble the 64 bits; the shift may set the sign bit, which is the two's complement
    -- reading of the unsigned hash.
    RETURN (v_hi << 32) | v_lo;
END
$fn$;""")


if __name__ == "__main__":
    main()
