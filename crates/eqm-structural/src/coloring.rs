//! Column colouring of a sparsity pattern: columns that share no row can be perturbed together
//! when a Jacobian is computed by difference quotients, or evaluated together by the chain rule.
//!
//! Input: the pattern as rows of column indices. Output: a colour per column and the number of
//! colours. Greedy in column order, linear in the number of nonzeros times the row lengths.

/// A greedy colouring of the `n` columns of a sparsity pattern given by rows: columns sharing
/// a row get different colours, each column the smallest colour its neighbours leave free.
pub fn color_columns<'a>(n: usize, rows: impl Iterator<Item = &'a Vec<u32>> + Clone) -> (Vec<u32>, usize) {
    let mut columns: Vec<Vec<u32>> = vec![Vec::new(); n];
    let all_rows: Vec<&Vec<u32>> = rows.collect();
    for (r, row) in all_rows.iter().enumerate() {
        for &j in row.iter() {
            columns[j as usize].push(r as u32);
        }
    }
    let mut colors = vec![u32::MAX; n];
    // `forbidden[c] == j` marks colour `c` as taken by a neighbour of column `j`.
    let mut forbidden: Vec<usize> = Vec::new();
    let mut n_colors = 0;
    for j in 0..n {
        for &r in &columns[j] {
            for &k in all_rows[r as usize].iter() {
                let c = colors[k as usize];
                if c != u32::MAX {
                    forbidden[c as usize] = j;
                }
            }
        }
        let c = (0..n_colors).find(|&c| forbidden[c] != j).unwrap_or(n_colors);
        if c == n_colors {
            n_colors += 1;
            forbidden.push(usize::MAX);
        }
        colors[j] = c as u32;
    }
    (colors, n_colors)
}

#[cfg(test)]
mod tests {
    use super::color_columns;

    #[test]
    fn columns_sharing_a_row_get_different_colours() {
        // A tridiagonal pattern needs three colours; a diagonal one needs one.
        let n = 10;
        let rows: Vec<Vec<u32>> = (0..n as u32)
            .map(|i| (i.saturating_sub(1)..=(i + 1).min(n as u32 - 1)).collect())
            .collect();
        let (colors, k) = color_columns(n, rows.iter());
        assert_eq!(k, 3);
        for row in &rows {
            let mut seen: Vec<u32> = row.iter().map(|&j| colors[j as usize]).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), row.len());
        }
        let diagonal: Vec<Vec<u32>> = (0..n as u32).map(|i| vec![i]).collect();
        assert_eq!(color_columns(n, diagonal.iter()).1, 1);
        assert_eq!(color_columns(0, diagonal[..0].iter()).1, 0);
    }
}
