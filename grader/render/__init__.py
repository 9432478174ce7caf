"""One module per output format; each turns data into text and knows nothing else. The
formats are listed, by what they render, in grader/render/formats.py."""
