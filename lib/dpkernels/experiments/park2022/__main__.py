"""``python -m dpkernels.experiments.park2022 [--out DIR] [--jobs N] [--only p19 p20]``: the runs of the registered
hypotheses that need runs of their own (:func:`dpkernels.experiments.park2022.variants.main`)."""

from dpkernels.experiments.park2022.variants import main

raise SystemExit(main())
