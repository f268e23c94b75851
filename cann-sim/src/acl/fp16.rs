//! `aclFloat16ToFloat` and `aclFloatToFloat16`: the ACL library's own
//! half-precision conversions, which are not IEEE's at the edges
//! (hicann/runtime `src/acl/aclrt_impl/types/fp16_impl.cpp`, `Fp16ToFloat`
//! and `FloatToFp16`):
//!
//! - float → half rounds to nearest, ties to even, and **saturates**: a
//!   value beyond the half range, an infinity and a NaN all become the
//!   largest finite half of their sign (±65504, `0x7BFF`/`0xFBFF`);
//! - half → float reads the all-ones exponent as an ordinary one: +Inf
//!   (`0x7C00`) is 65536.0, −Inf −65536.0, and a NaN 2^16 × (1 + m/1024)
//!   (`0x7E00` is 98304.0).
//!
//! Neither needs a device or an initialised library.

use acl_sys::aclFloat16;

/// The half's bits as a float, with the release's reading of exponent 31.
pub(crate) fn half_to_float(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = (bits >> 10) & 0x1f;
    let man = f32::from(bits & 0x3ff);
    if exp == 0x1f {
        // 2^(31 − 15) × (1 + m/1024), exact in f32.
        return sign * 65536.0 * (1.0 + man / 1024.0);
    }
    half::f16::from_bits(bits).to_f32()
}

/// The float as half bits, rounded to nearest even and saturated.
pub(crate) fn float_to_half(value: f32) -> u16 {
    let h = half::f16::from_f32(value);
    if h.is_finite() {
        h.to_bits()
    } else {
        // Overflow, infinity or NaN: the largest finite half, signed.
        (h.to_bits() & 0x8000) | 0x7bff
    }
}

/// `aclFloat16ToFloat`: the float value of the half `value` (see the module
/// docs for infinities and NaNs).
#[unsafe(no_mangle)]
pub extern "C" fn aclFloat16ToFloat(value: aclFloat16) -> f32 {
    half_to_float(value)
}

/// `aclFloatToFloat16`: `value` as a half, rounded to nearest even and
/// saturated to ±65504 (NaN and infinities included).
#[unsafe(no_mangle)]
pub extern "C" fn aclFloatToFloat16(value: f32) -> aclFloat16 {
    float_to_half(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_values_round_trip_and_round_to_nearest_even() {
        for v in [
            0.0f32,
            1.0,
            -2.5,
            0.333_251_95,
            65504.0,
            6.103_515_6e-5,
            5.960_464_5e-8,
        ] {
            assert_eq!(half_to_float(float_to_half(v)), v, "{v}");
        }
        assert_eq!(float_to_half(-0.0), 0x8000);
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: to even (1).
        assert_eq!(float_to_half(1.0 + 1.0 / 2048.0), 0x3c00);
        // 1 + 3 × 2^-11: a tie, to even (1 + 2^-9).
        assert_eq!(float_to_half(1.0 + 3.0 / 2048.0), 0x3c02);
        // Half the smallest subnormal is a tie: to zero; a bit more: up.
        assert_eq!(float_to_half(2.980_232_2e-8), 0);
        assert_eq!(float_to_half(3.0e-8), 1);
    }

    #[test]
    fn overflow_infinity_and_nan_saturate_to_the_largest_half() {
        assert_eq!(float_to_half(65520.0), 0x7bff);
        assert_eq!(float_to_half(1e10), 0x7bff);
        assert_eq!(float_to_half(f32::INFINITY), 0x7bff);
        assert_eq!(float_to_half(f32::NEG_INFINITY), 0xfbff);
        assert_eq!(float_to_half(f32::NAN), 0x7bff);
        assert_eq!(float_to_half(-f32::NAN), 0xfbff);
    }

    #[test]
    fn the_all_ones_exponent_reads_as_an_ordinary_exponent() {
        assert_eq!(half_to_float(0x7c00), 65536.0);
        assert_eq!(half_to_float(0xfc00), -65536.0);
        assert_eq!(half_to_float(0x7e00), 98304.0);
        assert_eq!(half_to_float(0x7bff), 65504.0);
        assert_eq!(half_to_float(0x0001), 5.960_464_5e-8);
        assert_eq!(half_to_float(0x8000).to_bits(), (-0.0f32).to_bits());
    }
}
