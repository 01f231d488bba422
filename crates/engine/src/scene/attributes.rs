//! Checks attribute blobs (`AttributesSerialize`, rbx-dom's docs/attributes.md) before
//! rbx_types decodes them: its reader sizes buffers from the blob's own counts, so a corrupt
//! count would ask for gigabytes (an abort, not a panic). Also finds the blobs of XML files.

/// Why an attribute blob cannot be decoded: the attribute (when known) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeBlobError {
    /// The attribute being read when the problem was found.
    pub attribute: Option<String>,
    pub message: String,
}

impl std::fmt::Display for AttributeBlobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.attribute {
            Some(name) => write!(f, "attribute '{name}': {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Rotation ids of axis-aligned CFrames (docs/attributes.md, "CFrame"); 0 means a full matrix.
const BASIC_ROTATIONS: [u8; 24] = [
    0x02, 0x03, 0x05, 0x06, 0x07, 0x09, 0x0a, 0x0c, 0x0d, 0x0e, 0x10, 0x11, 0x14, 0x15, 0x17, 0x18,
    0x19, 0x1b, 0x1c, 0x1e, 0x1f, 0x20, 0x22, 0x23,
];

/// Checks that `blob` is a well-formed attribute blob that rbx_types decodes without error:
/// every length and count fits in the bytes that follow it, every type is one rbx_types
/// reads, names and text fields are UTF-8. An empty blob is an empty set of attributes;
/// bytes after the last attribute are ignored (as rbx_types does).
pub fn check_attributes(blob: &[u8]) -> Result<(), AttributeBlobError> {
    let mut r = Cursor { bytes: blob, at: 0 };
    if blob.is_empty() {
        return Ok(());
    }
    let fail = |attribute: Option<&str>, message: String| AttributeBlobError {
        attribute: attribute.map(str::to_owned),
        message,
    };
    let count = r
        .u32()
        .map_err(|_| fail(None, "the attribute count is cut short".into()))?;
    for index in 0..count {
        let key = r.string().map_err(|e| {
            fail(
                None,
                format!("the name of attribute #{} of {count}: {e}", index + 1),
            )
        })?;
        let key = std::str::from_utf8(key).map_err(|_| {
            fail(
                None,
                format!("the name of attribute #{} is not UTF-8", index + 1),
            )
        })?;
        let at = r.at;
        let type_id = r
            .u8()
            .map_err(|_| fail(Some(key), "the value type is missing".into()))?;
        value(&mut r, type_id).map_err(|e| {
            fail(
                Some(key),
                format!("{e} (type 0x{type_id:02x} at byte {at})"),
            )
        })?;
    }
    Ok(())
}

/// Skips one value of attribute type `type_id`.
fn value(r: &mut Cursor<'_>, type_id: u8) -> Result<(), String> {
    match type_id {
        // String (binary).
        0x02 => r.string().map(drop),
        // Bool.
        0x03 => r.skip(1),
        // Int32, Float32.
        0x04 | 0x05 => r.skip(4),
        // Float64, UDim, Vector2.
        0x06 | 0x09 | 0x10 => r.skip(8),
        // UDim2, Rect.
        0x0a | 0x1c => r.skip(16),
        // BrickColor: a u32 that must name a BrickColor.
        0x0e => {
            let n = r.u32()?;
            // rbx_types keeps the low 16 bits of the number.
            if rbx_types::BrickColor::from_number(n as u16).is_none() {
                return Err(format!("{n} is not a BrickColor number"));
            }
            Ok(())
        }
        // Color3, Vector3.
        0x0f | 0x11 => r.skip(12),
        // CFrame: position, rotation id, the matrix when the id is 0.
        0x14 => {
            r.skip(12)?;
            match r.u8()? {
                0 => r.skip(36),
                id if BASIC_ROTATIONS.contains(&id) => Ok(()),
                id => Err(format!("0x{id:02x} is not a CFrame rotation id")),
            }
        }
        // EnumItem: enum name, value.
        0x15 => {
            let name = r.string()?;
            std::str::from_utf8(name).map_err(|_| "the enum name is not UTF-8".to_owned())?;
            r.skip(4)
        }
        // NumberSequence: count, keypoints of 3 f32; ColorSequence: count, keypoints of 5 f32.
        0x17 | 0x19 => {
            let size = if type_id == 0x17 { 12 } else { 20 };
            let n = r.u32()? as usize;
            let need = n.saturating_mul(size);
            if need > r.left() {
                return Err(format!(
                    "{n} keypoints need {need} bytes, {} are left",
                    r.left()
                ));
            }
            r.skip(need)
        }
        // NumberRange.
        0x1b => r.skip(8),
        // Font: weight, style, family, cached face id.
        0x21 => {
            r.skip(3)?;
            for field in ["family", "cached face id"] {
                let s = r.string()?;
                std::str::from_utf8(s).map_err(|_| format!("the font {field} is not UTF-8"))?;
            }
            Ok(())
        }
        other => Err(format!("0x{other:02x} is not an attribute type")),
    }
}

/// A reader over a blob that never reads past its end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.left() {
            return Err(format!(
                "needs {n} bytes at byte {}, {} are left",
                self.at,
                self.left()
            ));
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn skip(&mut self, n: usize) -> Result<(), String> {
        self.take(n).map(drop)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A u32 length and that many bytes.
    fn string(&mut self) -> Result<&'a [u8], String> {
        let at = self.at;
        let n = self.u32()? as usize;
        if n > self.left() {
            return Err(format!(
                "a string of {n} bytes at byte {at}, {} are left",
                self.left()
            ));
        }
        self.take(n)
    }
}

/// Checks every `AttributesSerialize` blob of an XML file (base64 text of a `BinaryString`
/// element, as rbx_xml writes it). Text that is not base64 is left for rbx_xml to reject.
/// Errors carry the byte offset of the element in the file.
pub fn check_xml_attributes(xml: &[u8]) -> Result<(), (usize, AttributeBlobError)> {
    const NAME: &[u8] = b"AttributesSerialize";
    let mut from = 0;
    while let Some(pos) = find(&xml[from..], NAME) {
        let at = from + pos;
        from = at + NAME.len();
        // Only the value of a `name="AttributesSerialize"` XML attribute starts a blob.
        let before = &xml[..at];
        let quoted = matches!(before.last(), Some(b'"') | Some(b'\''))
            && before[..before.len() - 1]
                .trim_ascii_end()
                .strip_suffix(b"=")
                .is_some_and(|b| b.trim_ascii_end().ends_with(b"name"));
        if !quoted {
            continue;
        }
        let Some(open) = xml[from..].iter().position(|&b| b == b'>') else {
            return Ok(());
        };
        let text_start = from + open + 1;
        let text_len = xml[text_start..]
            .iter()
            .position(|&b| b == b'<')
            .unwrap_or(xml.len() - text_start);
        let text = &xml[text_start..text_start + text_len];
        from = text_start + text_len;
        if let Some(blob) = base64(text) {
            check_attributes(&blob).map_err(|e| (at, e))?;
        }
    }
    Ok(())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Standard base64 with padding; ASCII whitespace is skipped. `None` for anything else.
fn base64(text: &[u8]) -> Option<Vec<u8>> {
    fn sextet(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits, mut padding) = (0u32, 0u32, 0usize);
    for &c in text {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == b'=' {
            padding += 1;
            continue;
        }
        if padding > 0 {
            return None;
        }
        acc = (acc << 6) | sextet(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    (padding <= 2).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(attrs: &[(&str, rbx_types::Variant)]) -> Vec<u8> {
        let mut a = rbx_types::Attributes::new();
        for (k, v) in attrs {
            a.insert((*k).to_owned(), v.clone());
        }
        let mut out = Vec::new();
        a.to_writer(&mut out).unwrap();
        out
    }

    #[test]
    fn accepts_what_rbx_types_writes() {
        use rbx_types::*;
        let b = blob(&[
            ("s", Variant::String("hi".into())),
            ("b", Variant::Bool(true)),
            ("n", Variant::Float64(2.5)),
            ("v", Variant::Vector3(Vector3::new(1.0, 2.0, 3.0))),
            ("c", Variant::Color3(Color3::new(1.0, 0.5, 0.0))),
            (
                "f",
                Variant::CFrame(CFrame::new(
                    Vector3::new(1.0, 2.0, 3.0),
                    Matrix3::identity(),
                )),
            ),
            ("r", Variant::NumberRange(NumberRange::new(0.0, 1.0))),
            (
                "q",
                Variant::NumberSequence(NumberSequence {
                    keypoints: vec![NumberSequenceKeypoint::new(0.0, 1.0, 0.0)],
                }),
            ),
            (
                "u",
                Variant::UDim2(UDim2::new(UDim::new(1.0, 2), UDim::new(3.0, 4))),
            ),
            ("k", Variant::BrickColor(BrickColor::ReallyRed)),
        ]);
        assert_eq!(check_attributes(&b), Ok(()));
        assert!(rbx_types::Attributes::from_reader(b.as_slice()).is_ok());
    }

    #[test]
    fn rejects_huge_counts_and_lengths() {
        // One attribute "a", a NumberSequence claiming 2^32-1 keypoints.
        let mut b = vec![1, 0, 0, 0, 1, 0, 0, 0, b'a', 0x17];
        b.extend_from_slice(&u32::MAX.to_le_bytes());
        let e = check_attributes(&b).unwrap_err();
        assert_eq!(e.attribute.as_deref(), Some("a"));
        assert!(e.message.contains("keypoints"), "{e}");
        // A name claiming 2^31 bytes.
        let mut b = vec![1, 0, 0, 0];
        b.extend_from_slice(&(1u32 << 31).to_le_bytes());
        assert!(check_attributes(&b).unwrap_err().message.contains("string"));
        // An unknown type.
        let b = vec![1, 0, 0, 0, 1, 0, 0, 0, b'a', 0x01];
        assert!(
            check_attributes(&b)
                .unwrap_err()
                .message
                .contains("not an attribute type")
        );
    }

    #[test]
    fn finds_blobs_in_xml() {
        let good = "AQAAAAEAAABhAwE="; // { a = true }
        let xml = format!(r#"<BinaryString name="AttributesSerialize">{good}</BinaryString>"#);
        assert_eq!(check_xml_attributes(xml.as_bytes()), Ok(()));
        assert_eq!(
            base64(good.as_bytes()).unwrap(),
            [1, 0, 0, 0, 1, 0, 0, 0, b'a', 3, 1]
        );
        // The same blob with the type changed to a NumberSequence of 2^32-1 keypoints.
        let bad = "AQAAAAEAAABhF/////8=";
        let xml = format!(
            "<Item><Properties>\n<BinaryString name = 'AttributesSerialize'>\n{bad}\n</BinaryString>"
        );
        let (at, e) = check_xml_attributes(xml.as_bytes()).unwrap_err();
        assert_eq!(at, xml.find("AttributesSerialize").unwrap());
        assert!(e.message.contains("keypoints"), "{e}");
        // The word elsewhere (a string value) is not a blob.
        let xml = format!(r#"<string name="Name">AttributesSerialize>{bad}</string>"#);
        assert_eq!(check_xml_attributes(xml.as_bytes()), Ok(()));
    }
}
