//! [`Decimator`]: streaming min/max reduction of a long series to a bounded number of
//! points.

/// Streaming min/max decimation: reduces any number of points to at most
/// `max_points` while keeping, for each bucket of consecutive points, the point with
/// the smallest and the point with the largest y (so spikes stay visible).
///
/// Buckets hold `stride` consecutive accepted points (bucket k holds points
/// `k·stride .. (k+1)·stride`, counted from the first accepted point); when the number
/// of full buckets reaches the capacity, neighbouring buckets are merged pairwise and
/// the stride doubles. Memory stays bounded by the capacity, whatever the number of
/// points pushed. Non-finite points are skipped (and not counted).
#[derive(Debug, Clone)]
pub struct Decimator {
    /// Full buckets, in order.
    buckets: Vec<Bucket>,
    /// The bucket being filled.
    current: Option<Bucket>,
    /// Points in `current`.
    current_len: u64,
    /// Points per full bucket.
    stride: u64,
    /// Maximum number of full buckets (even).
    capacity: usize,
    /// Accepted points so far.
    count: u64,
    /// Skipped (non-finite) points so far.
    skipped: u64,
}

/// A point with its sequence number among the accepted points.
#[derive(Debug, Clone, Copy)]
struct Tagged {
    seq: u64,
    x: f64,
    y: f64,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    min: Tagged,
    max: Tagged,
}

impl Bucket {
    fn new(p: Tagged) -> Self {
        Bucket { min: p, max: p }
    }
    /// Adds a later point (ties keep the earlier point).
    fn add(&mut self, p: Tagged) {
        if p.y < self.min.y {
            self.min = p;
        }
        if p.y > self.max.y {
            self.max = p;
        }
    }
    /// Merges the following bucket into this one.
    fn merge(&mut self, later: &Bucket) {
        self.add(later.min);
        self.add(later.max);
    }
    fn emit(&self, out: &mut Vec<(f64, f64)>) {
        let (a, b) = if self.min.seq <= self.max.seq {
            (self.min, self.max)
        } else {
            (self.max, self.min)
        };
        out.push((a.x, a.y));
        if b.seq != a.seq {
            out.push((b.x, b.y));
        }
    }
}

impl Decimator {
    /// Smallest accepted `max_points` (smaller values are raised to it).
    pub const MIN_POINTS: usize = 8;

    /// A decimator whose output has at most `max_points` points (at least
    /// [`Self::MIN_POINTS`]).
    pub fn new(max_points: usize) -> Self {
        let max_points = max_points.max(Self::MIN_POINTS);
        // Two points per full bucket plus two for the partial bucket.
        let capacity = ((max_points - 2) / 2) & !1;
        Decimator {
            buckets: Vec::with_capacity(capacity.min(1 << 16)),
            current: None,
            current_len: 0,
            stride: 1,
            capacity,
            count: 0,
            skipped: 0,
        }
    }

    /// Adds the next point; non-finite points are skipped.
    pub fn push(&mut self, x: f64, y: f64) {
        if !(x.is_finite() && y.is_finite()) {
            self.skipped += 1;
            return;
        }
        let p = Tagged {
            seq: self.count,
            x,
            y,
        };
        self.count += 1;
        match &mut self.current {
            Some(b) => b.add(p),
            None => self.current = Some(Bucket::new(p)),
        }
        self.current_len += 1;
        if self.current_len == self.stride {
            if let Some(b) = self.current.take() {
                self.buckets.push(b);
            }
            self.current_len = 0;
            if self.buckets.len() >= self.capacity {
                self.halve();
            }
        }
    }

    /// Merges neighbouring full buckets pairwise; the stride doubles.
    fn halve(&mut self) {
        let n = self.buckets.len() / 2;
        for i in 0..n {
            let mut b = self.buckets[2 * i];
            b.merge(&self.buckets[2 * i + 1]);
            self.buckets[i] = b;
        }
        self.buckets.truncate(n);
        self.stride *= 2;
    }

    /// Points per bucket at present (a power of two).
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// Finite points pushed so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Non-finite points skipped so far.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The decimated points in input order: for each bucket its minimum and maximum
    /// (once if they are the same point).
    pub fn finish(self) -> Vec<(f64, f64)> {
        let mut out = Vec::with_capacity(2 * self.buckets.len() + 2);
        for b in self.buckets.iter().chain(self.current.iter()) {
            b.emit(&mut out);
        }
        out
    }
}
