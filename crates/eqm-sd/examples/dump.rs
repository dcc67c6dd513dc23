fn main() {
    let path = std::env::args().nth(1).unwrap();
    let book = eqm_sd::data::spreadsheet(std::fs::read(&path).unwrap()).unwrap();
    for n in &book.names {
        println!("{n:?}");
    }
    for (name, grid) in &book.sheets {
        println!("== {name}");
        for (r, row) in grid.rows.iter().enumerate() {
            let cells: Vec<String> = row
                .iter()
                .map(|c| match c {
                    eqm_sd::data::Cell::Empty => "_".into(),
                    eqm_sd::data::Cell::Number(v) => v.to_string(),
                    eqm_sd::data::Cell::Text(t) => format!("'{t}'"),
                })
                .collect();
            println!("{}: {}", r + 1, cells.join("\t"));
        }
    }
}
