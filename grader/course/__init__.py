"""A course as data: its config and schema, notebooks read into submissions, cases, data files and
mistake catalogues."""
