"""Makes the singling-out control-size fixtures (run once; the CSVs are committed).

original: 2,000 records (age, zip, income, hours: integers; sex: two categories); control:
1,000 records from the same distribution (its first 500 rows are the quarter-size control);
near_copy: the original with one column of 5 % of its records changed; independent: 2,000 new
records from the same distribution. The ``4k`` files do the same at issue 23's scale: 4,000
records, a 2,000-record control (its first 1,000 rows the quarter-size one), 200 records changed.
"""

import numpy as np
import pandas as pd


def people(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.integers(0, 60, n),
                         "income": rng.integers(0, 120, n), "hours": rng.integers(1, 60, n),
                         "sex": rng.choice(["F", "M"], n)})


rng = np.random.default_rng(2023)
original, control, independent = people(2000, rng), people(1000, rng), people(2000, rng)
near = original.copy()
rows = rng.choice(len(near), 100, replace=False)
near.loc[rows, "income"] = rng.integers(0, 120, len(rows))
for name, frame in (("original", original), ("control", control), ("near_copy", near),
                    ("independent", independent)):
    frame.to_csv(f"{name}.csv.gz", index=False)

# The issue-23 scale: a 4,000-record original with a 2,000-record control (its first 1,000
# rows are the quarter-size control), a near copy and an independent release of 4,000.
rng = np.random.default_rng(2024)
original, control, independent = people(4000, rng), people(2000, rng), people(4000, rng)
near = original.copy()
rows = rng.choice(len(near), 200, replace=False)
near.loc[rows, "income"] = rng.integers(0, 120, len(rows))
for name, frame in (("original4k", original), ("control4k", control), ("near_copy4k", near),
                    ("independent4k", independent)):
    frame.to_csv(f"{name}.csv.gz", index=False)
