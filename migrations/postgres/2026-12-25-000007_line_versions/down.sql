DROP SEQUENCE ordering_line_versions;
