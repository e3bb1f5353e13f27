//! The model vocabulary every algorithm crate implements and the harness programs against. Every
//! method is fallible: a config or a data file can reach it, so it returns an error naming the
//! parameter or the input instead of panicking.
//!
//! * [`FeatureMap`]: a sampled random feature map, new points to [`Features`] in blocks (the
//!   Mondrian forest, random binning, random Fourier features, the Isolation Kernel, a fitted
//!   Fastfood model). Its error is always [`CoreError`], so that maps of different crates mix
//!   behind one `dyn FeatureMap`.
//! * [`Predictor`]: a fitted model, points to predictions (ridge on a feature map, a kernel
//!   expansion, a Gaussian-process posterior, a streaming regressor so far).
//! * [`OnlineLearner`]: predict, then update, one sample at a time (SGD, IK-OGD, kernel OGD,
//!   NOGD).
//! * [`StreamingRegressor`]: a [`Predictor`] fed one point (or one block of points) at a time,
//!   then finished (StreaMRAK, FALKON, LP-KRR).
//! * [`Classifier`]: fitted on [`LabelledRows`], predicts the classes of test rows from a seed
//!   (the random tessellation forests and their baselines).
//!
//! The traits other than [`FeatureMap`] carry their crate's error type, which converts from
//! [`CoreError`] (`type Error: From<CoreError>`).

use ndarray::{ArrayView2, Axis};
use rand::Rng;

use crate::features::Features;
use crate::CoreError;

/// A sampled random feature map `x ↦ φ(x)`: the features of new points, block by block. Maps
/// that are transductive in the paper (the Mondrian kernel, whose trees are sampled on all
/// points) route new points through the sampled partition; random binning gives a point no
/// feature in a grid where its bin was never seen.
pub trait FeatureMap: Send + Sync {
    /// Number of blocks (M trees or grids, R frequencies).
    fn n_blocks(&self) -> usize;

    /// The features of the rows of `x` (N × D), in blocks.
    fn features(&self, x: ArrayView2<f64>) -> Result<Features, CoreError>;
}

impl<M: FeatureMap + ?Sized> FeatureMap for Box<M> {
    fn n_blocks(&self) -> usize {
        (**self).n_blocks()
    }
    fn features(&self, x: ArrayView2<f64>) -> Result<Features, CoreError> {
        (**self).features(x)
    }
}

/// A fitted model: predictions for the rows of `x`.
pub trait Predictor {
    /// What one call returns: one value per row (`Array1<f64>`), a row of targets per row
    /// (`Array2<f64>`), or a predictive distribution.
    type Output;
    /// The crate's error.
    type Error: From<CoreError>;

    /// The predictions for the rows of `x` (N × D); an error if `x` does not fit the model
    /// (wrong number of columns, non-finite values where the model checks them).
    fn predict(&self, x: ArrayView2<f64>) -> Result<Self::Output, Self::Error>;
}

/// An online learner in the predict-then-update protocol (progressive validation): each sample
/// `(x_t, y_t)` of a stream is first predicted with the model of samples `< t`, then learnt.
pub trait OnlineLearner {
    /// One input row (e.g. `[f64]` for dense features, `[u32]` for one-hot column ids).
    type Row: ?Sized;
    /// The crate's error.
    type Error: From<CoreError>;

    /// `ŷ(x)` from the current model.
    fn predict_one(&self, x: &Self::Row) -> Result<f64, Self::Error>;

    /// Learns the sample `(x, y)` and returns the prediction `ŷ(x)` the model made before it,
    /// the value [`Self::predict_one`] would have returned. (An update needs that prediction
    /// anyway, e.g. SGD's residual, so the protocol costs one evaluation per sample, not two,
    /// and the recorded prediction is by construction the one the step used.) An invalid
    /// sample (a row of the wrong length, a label outside the learner's domain) is an error
    /// and leaves the model unchanged.
    fn update(&mut self, x: &Self::Row, y: f64) -> Result<f64, Self::Error>;

    /// Runs the learner over a stream in order and returns the prediction made before each
    /// update; stops at the first invalid sample.
    fn run_stream<'a, I>(&mut self, stream: I) -> Result<Vec<f64>, Self::Error>
    where
        I: IntoIterator<Item = (&'a Self::Row, f64)>,
        Self::Row: 'a,
    {
        stream.into_iter().map(|(x, y)| self.update(x, y)).collect()
    }
}

/// A regressor fitted from a stream: points arrive one at a time (or in blocks), the model is
/// [`finish`](Self::finish)ed at the end of the stream, and predicts like any [`Predictor`]
/// (with the levels or solves done so far before it is finished, where the method has such).
/// Points are `x` (d coordinates) with targets `y` (p values). The random stream `rng` is the
/// one the method draws from while streaming (StreaMRAK's landmarks); methods that draw
/// nothing ignore it.
pub trait StreamingRegressor: Predictor {
    /// Streams one point.
    fn push<R: Rng + ?Sized>(
        &mut self,
        x: &[f64],
        y: &[f64],
        rng: &mut R,
    ) -> Result<(), Self::Error>;

    /// Streams the rows of `x` (n × d) with the targets `y` (n × p) in order. The default
    /// pushes them one by one; a method whose statistics are sums over blocks (FALKON) adds
    /// the block at once.
    fn push_rows<R: Rng + ?Sized>(
        &mut self,
        x: ArrayView2<f64>,
        y: ArrayView2<f64>,
        rng: &mut R,
    ) -> Result<(), Self::Error> {
        if x.nrows() != y.nrows() {
            return Err(CoreError::shape("target rows vs point rows", x.nrows(), y.nrows()).into());
        }
        for (xi, yi) in x.axis_iter(Axis(0)).zip(y.axis_iter(Axis(0))) {
            self.push(&xi.to_vec(), &yi.to_vec(), rng)?;
        }
        Ok(())
    }

    /// Ends the stream: fits what is still collecting.
    fn finish<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<(), Self::Error>;

    /// Whether the model takes no more points (LP-KRR once its last level is fitted); further
    /// points would be ignored, so a caller may stop streaming.
    fn is_complete(&self) -> bool {
        false
    }
}

/// Labelled training rows of a classification: `x` (n × d) and one label in `0..n_classes`
/// per row. The classifier checks them (rows, labels, finiteness) before fitting.
#[derive(Debug, Clone, Copy)]
pub struct LabelledRows<'a> {
    pub x: ArrayView2<'a, f64>,
    pub labels: &'a [u32],
    pub n_classes: usize,
}

impl<'a> LabelledRows<'a> {
    /// The rows `x` with their `labels` in `0..n_classes` (checked by the classifier).
    pub fn new(x: ArrayView2<'a, f64>, labels: &'a [u32], n_classes: usize) -> Self {
        Self {
            x,
            labels,
            n_classes,
        }
    }
}

/// A classifier fitted on labelled rows that predicts the classes of test rows; every random
/// draw comes from `seed`, so a fit is reproducible whatever the thread count. Fit and
/// prediction are one call because some methods are transductive (the random tessellation
/// forests may place the test rows in their cells while fitting).
pub trait Classifier {
    /// What a fit returns: the predicted labels, possibly with statistics of the fit.
    type Output;
    /// The crate's error.
    type Error: From<CoreError>;

    /// Fits on `train` and predicts the rows of `test` (same columns as the training rows).
    fn fit_predict(
        &self,
        train: LabelledRows<'_>,
        test: ArrayView2<f64>,
        seed: u64,
    ) -> Result<Self::Output, Self::Error>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2};

    /// Scores of a running mean: the prediction is the mean of the targets seen so far.
    struct RunningMean {
        sum: f64,
        count: f64,
    }

    impl OnlineLearner for RunningMean {
        type Row = [f64];
        type Error = CoreError;
        fn predict_one(&self, _x: &[f64]) -> Result<f64, CoreError> {
            Ok(if self.count == 0.0 {
                0.0
            } else {
                self.sum / self.count
            })
        }
        fn update(&mut self, x: &[f64], y: f64) -> Result<f64, CoreError> {
            if !y.is_finite() {
                return Err(CoreError::invalid_input("target", y, "a finite number"));
            }
            let p = self.predict_one(x)?;
            self.sum += y;
            self.count += 1.0;
            Ok(p)
        }
    }

    impl Predictor for RunningMean {
        type Output = Array2<f64>;
        type Error = CoreError;
        fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>, CoreError> {
            Ok(Array2::from_elem((x.nrows(), 1), self.predict_one(&[])?))
        }
    }

    impl StreamingRegressor for RunningMean {
        fn push<R: Rng + ?Sized>(
            &mut self,
            x: &[f64],
            y: &[f64],
            _: &mut R,
        ) -> Result<(), CoreError> {
            self.update(x, y[0]).map(|_| ())
        }
        fn finish<R: Rng + ?Sized>(&mut self, _: &mut R) -> Result<(), CoreError> {
            Ok(())
        }
    }

    #[test]
    fn run_stream_records_the_prediction_before_each_update() {
        let mut learner = RunningMean {
            sum: 0.0,
            count: 0.0,
        };
        let row = [0.0];
        let ys = [2.0, 4.0, 9.0];
        let predictions = learner.run_stream(ys.iter().map(|&y| (&row[..], y)));
        assert_eq!(predictions, Ok(vec![0.0, 2.0, 3.0]));
        assert_eq!(learner.predict_one(&row), Ok(5.0));
        // An invalid sample is an error and stops the stream.
        let bad = learner.run_stream([(&row[..], 1.0), (&row[..], f64::NAN), (&row[..], 3.0)]);
        assert!(bad.is_err());
        assert_eq!(learner.count, 4.0);
    }

    #[test]
    fn pushing_rows_pushes_each_row_in_order() {
        let mut model = RunningMean {
            sum: 0.0,
            count: 0.0,
        };
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0);
        let x = Array2::<f64>::zeros((3, 2));
        model
            .push_rows(x.view(), array![[1.0], [2.0], [6.0]].view(), &mut rng)
            .unwrap();
        model.finish(&mut rng).unwrap();
        assert_eq!(
            model.predict(x.view()).unwrap(),
            array![[3.0], [3.0], [3.0]]
        );
        assert!(!model.is_complete());
        assert!(model
            .push_rows(x.view(), array![[1.0]].view(), &mut rng)
            .is_err());
    }
}
