//! Assembling a [`BlockBandedMatrix`] through its public API: adding blocks and
//! diagonals with their checks, and the product A x of the assembled matrix (module
//! docs of [`super`]: layout).

use super::*;

impl<T: BandScalar> BlockBandedMatrix<T> {
    /// Adds `value` to block (row, col) of A, for col ≤ row ≤ col + p. A block above the
    /// diagonal is not stored: add the transpose of A_ij (j > i) at (j, i). For a
    /// diagonal block (row = col) only the lower triangle is used (A is symmetric): the
    /// whole block is added, and entries above its diagonal are ignored by
    /// [`factor`](Self::factor) and [`mul_vec`](Self::mul_vec).
    ///
    /// # Errors
    /// [`BandedError::OutOfRange`], [`BandedError::UpperBlock`],
    /// [`BandedError::OutOfBand`] for a block that is not stored;
    /// [`BandedError::OutsideProfile`] for a block left of the row's profile start;
    /// [`BandedError::NonFiniteBlock`] if an entry of `value`, or of the sum, is not
    /// finite; [`BandedError::NotAssembling`] after [`factor`](Self::factor). On error the
    /// matrix is unchanged.
    pub fn add_block(
        &mut self,
        row: usize,
        col: usize,
        value: &Block<T>,
    ) -> Result<(), BandedError> {
        self.require_assembling("add_block")?;
        let k = self.index(row, col)?;
        let sum = to_matrix::<T>(&self.band[k]) + value;
        if let Some(entry) = first_non_finite(&sum) {
            return Err(BandedError::NonFiniteBlock { row, col, entry });
        }
        self.band[k] = from_matrix::<T>(&sum);
        Ok(())
    }

    /// Adds `diagonal` to the 6 diagonal entries of block (row, row), e.g. the
    /// compliances α̃ = α/h² of a Gauss point's constraint rows.
    ///
    /// # Errors
    /// [`BandedError::OutOfRange`] for row ≥ n; [`BandedError::NonFiniteBlock`] if an
    /// entry, or a sum, is not finite; [`BandedError::NotAssembling`] after
    /// [`factor`](Self::factor). On error the matrix is unchanged.
    pub fn add_diagonal(
        &mut self,
        row: usize,
        diagonal: &SVector<T, B>,
    ) -> Result<(), BandedError> {
        self.update_diagonal(row, diagonal, true, "add_diagonal")
    }

    /// Sets the 6 diagonal entries of block (row, row) to `diagonal` (the rest of the
    /// block is kept).
    ///
    /// # Errors
    /// As [`add_diagonal`](Self::add_diagonal).
    pub fn set_diagonal(
        &mut self,
        row: usize,
        diagonal: &SVector<T, B>,
    ) -> Result<(), BandedError> {
        self.update_diagonal(row, diagonal, false, "set_diagonal")
    }

    fn update_diagonal(
        &mut self,
        row: usize,
        diagonal: &SVector<T, B>,
        add: bool,
        operation: &'static str,
    ) -> Result<(), BandedError> {
        self.require_assembling(operation)?;
        let k = self.index(row, row)?;
        let mut values = [T::zero(); B];
        for (r, v) in values.iter_mut().enumerate() {
            *v = if add {
                self.band[k].col(r)[r] + diagonal[r]
            } else {
                diagonal[r]
            };
            if !v.is_finite() {
                return Err(BandedError::NonFiniteBlock {
                    row,
                    col: row,
                    entry: (r, r),
                });
            }
        }
        for (r, v) in values.into_iter().enumerate() {
            self.band[k].col_mut(r)[r] = v;
        }
        Ok(())
    }

    /// y = A x for the assembled (symmetric) matrix, reading the lower band and
    /// mirroring it (for residuals ‖A x − b‖ and tests). No allocation.
    ///
    /// # Errors
    /// [`BandedError::LengthMismatch`] unless both have 6n entries;
    /// [`BandedError::NotAssembling`] after [`factor`](Self::factor) (the storage then
    /// holds L: keep a clone of the assembled matrix to multiply).
    pub fn mul_vec(&self, x: &[T], y: &mut [T]) -> Result<(), BandedError> {
        self.require_assembling("mul_vec")?;
        self.check_len("x", x.len())?;
        self.check_len("y", y.len())?;
        let n = self.blocks;
        y.fill(T::zero());
        for i in 0..n {
            let xi = seg(x, i);
            let mut yi = seg(y, i);
            for j in self.row_start[i]..i {
                let a = &self.band[self.slot(i, j)];
                let xj = seg(x, j);
                let mut yj = seg(y, j);
                for col in 0..B {
                    let mut acc = T::zero();
                    for r in 0..B {
                        yi[r] += a.col(col)[r] * xj[col];
                        acc += a.col(col)[r] * xi[r];
                    }
                    yj[col] += acc;
                }
                put(y, j, &yj);
            }
            let a = &self.band[self.slot(i, i)];
            for (col, &x) in xi.iter().enumerate() {
                for (r, y) in yi.iter_mut().enumerate() {
                    // Lower triangle, mirrored.
                    let v = if r >= col {
                        a.col(col)[r]
                    } else {
                        a.col(r)[col]
                    };
                    *y += v * x;
                }
            }
            put(y, i, &yi);
        }
        Ok(())
    }
}
