//! [`series_from_csv`]: series read from the columns of a CSV file, decimated as the
//! file is streamed.

use super::{Decimator, PlotError, Series};
use std::path::Path;

/// Reads columns of a CSV file (with a header line) as series, streaming the file
/// through one [`Decimator`] per y column so that any file size gives at most
/// `max_points` points per series.
///
/// Each series is labelled with its column name. Empty fields are skipped (no point);
/// `NaN`/`inf` fields are read and then skipped by the decimator.
///
/// # Errors
/// [`PlotError::Io`] if the file cannot be opened, [`PlotError::Csv`] if it is
/// malformed, [`PlotError::MissingColumn`] if a column is not in the header,
/// [`PlotError::Parse`] if a field is not a number.
pub fn series_from_csv(
    path: &Path,
    x_column: &str,
    y_columns: &[&str],
    max_points: usize,
) -> Result<Vec<Series>, PlotError> {
    let file = std::fs::File::open(path).map_err(|source| PlotError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let csv_err = |source| PlotError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(std::io::BufReader::new(file));
    let headers = reader.headers().map_err(csv_err)?.clone();
    let index = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| PlotError::MissingColumn {
                path: path.to_path_buf(),
                column: name.to_string(),
            })
    };
    let xi = index(x_column)?;
    let yis = y_columns
        .iter()
        .map(|c| index(c))
        .collect::<Result<Vec<_>, _>>()?;
    let mut decimators: Vec<Decimator> = y_columns
        .iter()
        .map(|_| Decimator::new(max_points))
        .collect();

    let parse = |record: &csv::StringRecord, i: usize, name: &str| -> Result<_, PlotError> {
        let field = record.get(i).unwrap_or("");
        if field.is_empty() {
            return Ok(None);
        }
        field
            .parse::<f64>()
            .map(Some)
            .map_err(|_| PlotError::Parse {
                path: path.to_path_buf(),
                line: record.position().map_or(0, |p| p.line()),
                column: name.to_string(),
                value: field.to_string(),
            })
    };

    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(csv_err)? {
        let Some(x) = parse(&record, xi, x_column)? else {
            continue;
        };
        for ((&yi, name), d) in yis.iter().zip(y_columns).zip(&mut decimators) {
            if let Some(y) = parse(&record, yi, name)? {
                d.push(x, y);
            }
        }
    }
    Ok(y_columns
        .iter()
        .zip(decimators)
        .map(|(name, d)| Series {
            label: name.to_string(),
            points: d.finish(),
        })
        .collect())
}
