//! Test and bench fixtures: PNG and tile-set XML loading (I/O stays out of the library) and
//! the table of the 14 overlapping samples with their `samples.xml` settings.
#![allow(dead_code)]

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use procmodel_wfc::{NeighborRule, OverlappingConfig, TileDesc, TileSet, TileSymmetry};

/// Path of a fixture under `tests/data`.
pub fn data_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// An RGBA image as `0xRRGGBBAA` pixels.
pub struct Image {
    pub pixels: Vec<u32>,
    pub width: usize,
    pub height: usize,
}

/// Decodes a PNG fixture to `0xRRGGBBAA` pixels.
pub fn load_png(name: &str) -> Image {
    let path = data_path(name);
    let file = File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut decoder = png::Decoder::new(BufReader::new(file));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    let bytes = &buf[..info.buffer_size()];
    let channels = match info.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => panic!("indexed png after EXPAND"),
    };
    let pixels = bytes
        .chunks_exact(channels)
        .map(|c| {
            let (r, g, b, a) = match channels {
                1 => (c[0], c[0], c[0], 255),
                2 => (c[0], c[0], c[0], c[1]),
                3 => (c[0], c[1], c[2], 255),
                _ => (c[0], c[1], c[2], c[3]),
            };
            u32::from_be_bytes([r, g, b, a])
        })
        .collect();
    Image {
        pixels,
        width: info.width as usize,
        height: info.height as usize,
    }
}

/// Parses a tile-set XML fixture (`tests/data/tilesets/NAME.xml`).
pub fn load_tileset(name: &str) -> TileSet {
    let path = data_path(&format!("tilesets/{name}.xml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = roxmltree::Document::parse(&text).expect("tile-set xml");
    let root = doc.root_element();
    let mut set = TileSet::default();
    let child = |name: &str| root.children().find(|n| n.has_tag_name(name));
    for tile in child("tiles")
        .expect("<tiles>")
        .children()
        .filter(|n| n.has_tag_name("tile"))
    {
        let sym = tile.attribute("symmetry").unwrap_or("X");
        set.tiles.push(TileDesc {
            name: tile.attribute("name").expect("tile name").to_owned(),
            symmetry: TileSymmetry::from_char(sym.chars().next().unwrap_or('X'))
                .unwrap_or_else(|| panic!("symmetry {sym:?}")),
            weight: tile
                .attribute("weight")
                .map_or(1.0, |w| w.parse().expect("weight")),
        });
    }
    for n in child("neighbors")
        .expect("<neighbors>")
        .children()
        .filter(|n| n.has_tag_name("neighbor"))
    {
        set.neighbors.push(
            NeighborRule::parse(
                n.attribute("left").expect("left"),
                n.attribute("right").expect("right"),
            )
            .expect("neighbour"),
        );
    }
    if let Some(subsets) = child("subsets") {
        for s in subsets.children().filter(|n| n.has_tag_name("subset")) {
            let tiles = s
                .children()
                .filter(|n| n.has_tag_name("tile"))
                .map(|t| t.attribute("name").expect("subset tile").to_owned())
                .collect();
            set.subsets
                .push((s.attribute("name").expect("subset name").to_owned(), tiles));
        }
    }
    set
}

/// The 14 overlapping samples: the first 13 distinct overlapping names of `samples.xml` plus
/// the hard `Cat`, each with its first entry's settings.
pub const SAMPLES: [(&str, OverlappingConfig); 14] = [
    ("Chess", cfg(2, 8, true, true, false)),
    ("Skyline", cfg(3, 2, true, true, true)),
    ("Flowers", cfg(3, 2, true, true, true)),
    ("Hogs", cfg(3, 8, true, true, false)),
    ("Knot", cfg(3, 8, true, true, false)),
    ("LessRooms", cfg(3, 8, true, true, false)),
    ("Mountains", cfg(3, 2, true, true, false)),
    ("Office", cfg(3, 8, true, true, false)),
    ("Paths", cfg(3, 8, true, true, false)),
    ("Platformer", cfg(2, 2, true, true, true)),
    ("RedMaze", cfg(2, 8, true, false, false)),
    ("Rooms", cfg(3, 8, true, true, false)),
    ("Rule126", cfg(3, 2, false, false, false)),
    ("Cat", cfg(3, 2, true, true, false)),
];

const fn cfg(
    n: usize,
    symmetry: usize,
    periodic_input: bool,
    periodic_output: bool,
    ground: bool,
) -> OverlappingConfig {
    OverlappingConfig {
        n,
        symmetry,
        periodic_input,
        periodic_output,
        ground,
    }
}

/// FNV-1a 64 of a pattern grid, for golden values.
pub fn hash_patterns(patterns: &[u32]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in patterns {
        for b in p.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The peer (`wfc` crate) set up on the same sample with the same pattern size, symmetry and
/// output wrapping; `ground` is not expressed (the peer has no such option).
pub struct Peer {
    pub stats: wfc::GlobalStats,
    pub wrap: bool,
}

impl Peer {
    pub fn new(img: &Image, cfg: &OverlappingConfig) -> Self {
        use wfc::orientation::Orientation::*;
        let grid = grid_2d::Grid::new_fn(
            grid_2d::Size::new(img.width as u32, img.height as u32),
            |c| img.pixels[c.x as usize + c.y as usize * img.width],
        );
        let orientations: &[wfc::Orientation] = match cfg.symmetry {
            1 => &[Original],
            2 => &[Original, DiagonallyFlippedClockwise90],
            4 => &[
                Original,
                DiagonallyFlippedClockwise90,
                Clockwise90,
                DiagonallyFlipped,
            ],
            _ => &wfc::orientation::ALL,
        };
        let patterns = wfc::overlapping::OverlappingPatterns::new(
            grid,
            std::num::NonZeroU32::new(cfg.n as u32).expect("n > 0"),
            orientations,
        );
        Peer {
            stats: patterns.global_stats(),
            wrap: cfg.periodic_output,
        }
    }

    /// One attempt; `true` on success.
    pub fn run_once(&self, size: u32, seed: u64) -> bool {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let size = wfc::Size::new(size, size);
        if self.wrap {
            let mut run = wfc::RunOwn::new_wrap(size, &self.stats, wfc::wrap::WrapXY, &mut rng);
            run.collapse(&mut rng).is_ok()
        } else {
            let mut run = wfc::RunOwn::new_wrap(size, &self.stats, wfc::wrap::WrapNone, &mut rng);
            run.collapse(&mut rng).is_ok()
        }
    }
}
