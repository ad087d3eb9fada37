-- The horizon and the marks go with the columns (the previous migration's down).
SELECT 1
