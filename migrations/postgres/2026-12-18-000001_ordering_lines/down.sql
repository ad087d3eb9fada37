DROP TABLE ordering_lines;
