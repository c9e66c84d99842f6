//! Sentence-transformers pooling: mean over real tokens, then unit length.
//!
//! Written with differentiable tensor ops only, so training backpropagates through it.

use candle_core::{DType, Device, Tensor};

use super::tokenize::TokenizedInput;

/// `hidden` [B, L, H], `mask` [B, L] (1 for tokens, 0 for padding) → [B, H] in f32.
pub fn mean_pool(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let hidden = hidden.to_dtype(DType::F32)?;
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
    let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
    // sentence-transformers clamps the count at 1e-9; a row is never all padding here.
    let counts = mask.sum(1)?.maximum(1e-9)?;
    summed.broadcast_div(&counts)
}

/// [`mean_pool`] for inference: each sequence's sum runs over its own tokens, in order, on
/// the host. The tensor sum ran over the padded length, whose vectorised reduction associated
/// a sequence's sum otherwise in a batch with a longer one: the same chunk got other last bits
/// than alone (issue 73). Not differentiable; training keeps [`mean_pool`].
pub fn mean_pool_exact(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let (b, l, h) = hidden.dims3()?;
    let hidden = hidden.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?;
    let mask = mask.to_dtype(DType::U32)?.flatten_all()?.to_vec1::<u32>()?;
    let mut out = vec![0f32; b * h];
    for (s, row) in out.chunks_mut(h).enumerate() {
        let tokens = mask[s * l..(s + 1) * l].iter().filter(|&&m| m != 0).count().max(1);
        for t in 0..l {
            if mask[s * l + t] == 0 {
                continue;
            }
            for (o, x) in row.iter_mut().zip(&hidden[(s * l + t) * h..(s * l + t + 1) * h]) {
                *o += x;
            }
        }
        row.iter_mut().for_each(|o| *o /= tokens as f32);
    }
    Tensor::from_vec(out, (b, h), &Device::Cpu)
}

/// Rows scaled to unit L2 norm (torch's `normalize`, eps 1e-12).
pub fn l2_normalize(x: &Tensor) -> candle_core::Result<Tensor> {
    let norms = x.sqr()?.sum_keepdim(1)?.sqrt()?.maximum(1e-12)?;
    x.broadcast_div(&norms)
}

/// A padded batch on `device`: ids, segment ids and attention mask, each [B, longest].
pub struct PaddedBatch {
    pub ids: Tensor,
    pub type_ids: Tensor,
    pub mask: Tensor,
}

/// A padded batch still in host memory: the embedding pipeline pads on its producer thread,
/// so the thread that runs the forward pass only copies it to the device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostBatch {
    pub rows: usize,
    pub width: usize,
    pub ids: Vec<u32>,
    pub type_ids: Vec<u32>,
    pub mask: Vec<u32>,
}

impl HostBatch {
    /// Row-major [rows, longest], padded with `pad_id` (segment 0, mask 0).
    pub fn pad(batch: &[&TokenizedInput], pad_id: u32) -> HostBatch {
        let rows = batch.len();
        let width = batch.iter().map(|t| t.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![pad_id; rows * width];
        let mut type_ids = vec![0u32; rows * width];
        let mut mask = vec![0u32; rows * width];
        for (row, item) in batch.iter().enumerate() {
            let at = row * width;
            ids[at..at + item.len()].copy_from_slice(&item.ids);
            type_ids[at..at + item.len()].copy_from_slice(&item.type_ids);
            mask[at..at + item.len()].fill(1);
        }
        HostBatch { rows, width, ids, type_ids, mask }
    }

    /// The host-to-device copy.
    pub fn upload(self, device: &Device) -> candle_core::Result<PaddedBatch> {
        let shape = (self.rows, self.width);
        Ok(PaddedBatch {
            ids: Tensor::from_vec(self.ids, shape, device)?,
            type_ids: Tensor::from_vec(self.type_ids, shape, device)?,
            mask: Tensor::from_vec(self.mask, shape, device)?,
        })
    }
}

pub fn pad_batch(
    batch: &[&TokenizedInput],
    pad_id: u32,
    device: &Device,
) -> candle_core::Result<PaddedBatch> {
    HostBatch::pad(batch, pad_id).upload(device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_ignores_masked_positions_and_normalises() {
        let dev = Device::Cpu;
        let hidden = Tensor::new(&[[[1f32, 2.], [3., 4.], [100., 100.]]], &dev).unwrap();
        let mask = Tensor::new(&[[1u32, 1, 0]], &dev).unwrap();
        let pooled = mean_pool(&hidden, &mask).unwrap();
        assert_eq!(pooled.to_vec2::<f32>().unwrap(), vec![vec![2., 3.]]);
        let unit = l2_normalize(&pooled).unwrap().to_vec2::<f32>().unwrap();
        let norm: f32 = unit[0].iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-6);
        assert!((unit[0][0] / unit[0][1] - 2. / 3.).abs() < 1e-6);
    }

    #[test]
    fn zero_vector_stays_finite() {
        let x = Tensor::zeros((1, 4), DType::F32, &Device::Cpu).unwrap();
        let y = l2_normalize(&x).unwrap().to_vec2::<f32>().unwrap();
        assert!(y[0].iter().all(|v| *v == 0.0));
    }

    #[test]
    fn pads_to_the_longest_row() {
        let a = TokenizedInput { ids: vec![5, 6, 7], type_ids: vec![0, 0, 1] };
        let b = TokenizedInput { ids: vec![5], type_ids: vec![0] };
        let p = pad_batch(&[&a, &b], 9, &Device::Cpu).unwrap();
        assert_eq!(p.ids.to_vec2::<u32>().unwrap(), vec![vec![5, 6, 7], vec![5, 9, 9]]);
        assert_eq!(p.type_ids.to_vec2::<u32>().unwrap(), vec![vec![0, 0, 1], vec![0, 0, 0]]);
        assert_eq!(p.mask.to_vec2::<u32>().unwrap(), vec![vec![1, 1, 1], vec![1, 0, 0]]);
    }
}
