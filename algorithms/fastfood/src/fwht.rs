//! The fast Walsh-Hadamard transform: `v ← H v` for the unnormalised d × d Hadamard matrix
//! (entries ±1, Sylvester order, `H H = d I`), in place in O(d log d) (spec §3).

/// The smallest power of two `>= n` (`n >= 1`): the padded dimension of Fastfood.
pub fn padded_dimension(n: usize) -> usize {
    n.max(1).next_power_of_two()
}

/// `v ← H v` in place; `v.len()` must be a power of two (1 is the identity).
pub fn fwht(v: &mut [f64]) {
    fwht_interleaved(v, 1);
}

/// The transform of `stride` interleaved vectors at once, element i of vector r at
/// `v[i·stride + r]` (`v ← (H ⊗ I_stride) v`): each vector gets the butterflies of [`fwht`] in
/// the same order, so the same bits, with the inner loops running over contiguous runs of at
/// least `stride` values (vectorised). `v.len() / stride` must be a power of two.
pub fn fwht_interleaved(v: &mut [f64], stride: usize) {
    let len = v.len();
    debug_assert!(
        stride > 0 && len.is_multiple_of(stride) && (len / stride).is_power_of_two(),
        "FWHT of {len} values in {stride} interleaved vectors"
    );
    let mut h = stride;
    while h < len {
        for block in v.chunks_exact_mut(2 * h) {
            let (lo, hi) = block.split_at_mut(h);
            for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
                let (x, y) = (*a, *b);
                *a = x + y;
                *b = x - y;
            }
        }
        h *= 2;
    }
}

/// Entry (i, j) of the Sylvester Hadamard matrix: `(-1)^{popcount(i & j)}`.
pub fn hadamard_entry(i: usize, j: usize) -> f64 {
    if (i & j).count_ones().is_multiple_of(2) {
        1.0
    } else {
        -1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_and_dense_transforms_agree_and_h_squared_is_d_identity() {
        for d in [1usize, 2, 4, 8, 32, 128] {
            let v: Vec<f64> = (0..d).map(|i| ((i * 7 + 3) % 11) as f64 - 5.0).collect();
            let mut fast = v.clone();
            fwht(&mut fast);
            for (i, f) in fast.iter().enumerate() {
                let dense: f64 = (0..d).map(|j| hadamard_entry(i, j) * v[j]).sum();
                assert!((f - dense).abs() < 1e-12, "d = {d}, row {i}");
            }
            fwht(&mut fast);
            for (a, b) in fast.iter().zip(&v) {
                assert!(
                    (a - d as f64 * b).abs() < 1e-9,
                    "H H = d I fails at d = {d}"
                );
            }
        }
        assert_eq!(padded_dimension(1), 1);
        assert_eq!(padded_dimension(9), 16);
        assert_eq!(padded_dimension(128), 128);
    }

    #[test]
    fn interleaved_transforms_are_each_vectors_fast_transform_bit_for_bit() {
        for (d, stride) in [(1usize, 3usize), (8, 1), (8, 5), (64, 4), (16, 64)] {
            let vectors: Vec<Vec<f64>> = (0..stride)
                .map(|r| {
                    (0..d)
                        .map(|i| ((i * 13 + r * 7) as f64 * 0.37).sin())
                        .collect()
                })
                .collect();
            let mut v = vec![0.0; d * stride];
            for (r, x) in vectors.iter().enumerate() {
                for (i, xi) in x.iter().enumerate() {
                    v[i * stride + r] = *xi;
                }
            }
            fwht_interleaved(&mut v, stride);
            for (r, x) in vectors.iter().enumerate() {
                let mut one = x.clone();
                fwht(&mut one);
                for (i, oi) in one.iter().enumerate() {
                    assert_eq!(
                        v[i * stride + r].to_bits(),
                        oi.to_bits(),
                        "d {d}, vector {r}"
                    );
                }
            }
        }
    }
}
