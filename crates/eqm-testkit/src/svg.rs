//! Reading an SVG drawing back in tests: a small scan of its tags and attributes (no XML
//! library), enough to check that the document nests properly and to find the groups that a
//! component diagram marks with `class` and `data-` attributes.

/// A start, end or empty-element tag.
#[derive(Debug, Clone)]
pub struct Tag {
    pub name: String,
    pub attributes: Vec<(String, String)>,
    /// `</name>`.
    pub end: bool,
    /// `<name ... />`.
    pub empty: bool,
}

impl Tag {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.attributes.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    pub fn has_class(&self, class: &str) -> bool {
        self.get("class").is_some_and(|c| c.split(' ').any(|c| c == class))
    }
}

/// The tags of `svg` in order; an error names what is not well-formed (a tag left open,
/// an end tag that closes another, an attribute without a quoted value).
pub fn tags(svg: &str) -> Result<Vec<Tag>, String> {
    let mut out = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find('<') {
        rest = &rest[start..];
        if let Some(after) = rest.strip_prefix("<?") {
            rest = &after[after.find("?>").ok_or("unterminated <?")? + 2..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = &after[after.find("-->").ok_or("unterminated comment")? + 3..];
            continue;
        }
        // The tag ends at the first `>` outside a quoted value.
        let mut quoted = false;
        let mut close = None;
        for (i, c) in rest.char_indices() {
            match c {
                '"' => quoted = !quoted,
                '>' if !quoted => {
                    close = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let close = close.ok_or("unterminated tag")?;
        let tag = parse_tag(&rest[1..close])?;
        rest = &rest[close + 1..];
        if tag.end {
            match open.pop() {
                Some(name) if name == tag.name => {}
                other => return Err(format!("</{}> closes {:?}", tag.name, other)),
            }
        } else if !tag.empty {
            open.push(tag.name.clone());
        }
        out.push(tag);
    }
    if !open.is_empty() {
        return Err(format!("tags left open: {open:?}"));
    }
    Ok(out)
}

fn parse_tag(text: &str) -> Result<Tag, String> {
    let (end, text) = match text.strip_prefix('/') {
        Some(t) => (true, t),
        None => (false, text),
    };
    let (empty, text) = match text.strip_suffix('/') {
        Some(t) => (true, t),
        None => (false, text),
    };
    let name_end = text.find(char::is_whitespace).unwrap_or(text.len());
    let name = text[..name_end].to_string();
    let mut attributes = Vec::new();
    let mut rest = text[name_end..].trim_start();
    while !rest.is_empty() {
        let eq = rest
            .find('=')
            .ok_or_else(|| format!("attribute without value in <{name}>"))?;
        let key = rest[..eq].trim().to_string();
        let after = rest[eq + 1..].trim_start();
        let after = after
            .strip_prefix('"')
            .ok_or_else(|| format!("unquoted value of {key} in <{name}>"))?;
        let close = after.find('"').ok_or("unterminated value")?;
        attributes.push((key, unescape(&after[..close])));
        rest = after[close + 1..].trim_start();
    }
    Ok(Tag {
        name,
        attributes,
        end,
        empty,
    })
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// A component or connector box of a diagram.
#[derive(Debug, Clone, PartialEq)]
pub struct Box {
    pub name: String,
    pub class: String,
    pub symbol: String,
    pub connector: bool,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Box {
    pub fn overlaps(&self, other: &Box) -> bool {
        self.x < other.x + other.w
            && other.x < self.x + self.w
            && self.y < other.y + other.h
            && other.y < self.y + self.h
    }

    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }
}

/// A drawn connection: its two ends as written in the connect, its kind, and how many
/// connections it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub a: String,
    pub b: String,
    pub kind: String,
    pub count: usize,
}

/// What a component diagram shows.
#[derive(Debug, Clone, Default)]
pub struct Drawing {
    pub boxes: Vec<Box>,
    pub links: Vec<Link>,
}

impl Drawing {
    pub fn find(&self, name: &str) -> &Box {
        self.boxes.iter().find(|b| b.name == name).unwrap_or_else(|| {
            panic!(
                "no box {name} among {:?}",
                self.boxes.iter().map(|b| &b.name).collect::<Vec<_>>()
            )
        })
    }

    /// Two boxes that overlap, if any.
    pub fn overlap(&self) -> Option<(&Box, &Box)> {
        let mut order: Vec<&Box> = self.boxes.iter().collect();
        order.sort_by(|a, b| a.x.total_cmp(&b.x));
        for (i, a) in order.iter().enumerate() {
            for b in &order[i + 1..] {
                if b.x >= a.x + a.w {
                    break;
                }
                if a.overlaps(b) {
                    return Some((a, b));
                }
            }
        }
        None
    }
}

/// Reads a component diagram back; panics when the document is not well-formed.
pub fn drawing(svg: &str) -> Drawing {
    let tags = tags(svg).unwrap_or_else(|e| panic!("the SVG is not well-formed: {e}"));
    let mut drawing = Drawing::default();
    for tag in tags.iter().filter(|t| t.name == "g" && !t.end) {
        if tag.has_class("component") || tag.has_class("connector") {
            let numbers: Vec<f64> = tag
                .get("data-box")
                .expect("a box")
                .split(' ')
                .map(|n| n.parse().expect("a number"))
                .collect();
            drawing.boxes.push(Box {
                name: tag.get("data-name").expect("a name").to_string(),
                class: tag.get("data-class").expect("a class").to_string(),
                symbol: tag.get("data-symbol").expect("a symbol").to_string(),
                connector: tag.has_class("connector"),
                x: numbers[0],
                y: numbers[1],
                w: numbers[2],
                h: numbers[3],
            });
        } else if tag.has_class("connection") {
            let class = tag.get("class").unwrap_or_default();
            drawing.links.push(Link {
                a: tag.get("data-a").expect("an end").to_string(),
                b: tag.get("data-b").expect("an end").to_string(),
                kind: class.split(' ').nth(1).unwrap_or_default().to_string(),
                count: tag.get("data-count").and_then(|c| c.parse().ok()).unwrap_or(1),
            });
        }
    }
    drawing
}
