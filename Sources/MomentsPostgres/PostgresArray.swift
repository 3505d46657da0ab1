/// PostgreSQL array literals, for passing many values as one text parameter
/// (`unnest($1::text[])`) instead of one round trip per row.
enum PostgresArray {
    /// `{"a","b",NULL}`: every element quoted, `"` and `\` escaped.
    static func literal(_ values: some Sequence<String?>) -> String {
        var text = "{"
        var first = true
        for value in values {
            if !first { text += "," }
            first = false
            guard let value else {
                text += "NULL"
                continue
            }
            text += "\""
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { text += "\\" }
                text.unicodeScalars.append(character)
            }
            text += "\""
        }
        return text + "}"
    }

    static func literal(_ values: some Sequence<String>) -> String {
        literal(values.lazy.map { Optional($0) })
    }
}
