"""Park (2022): the experiments behind ``notebooks/park2022.py``, by role.

* :mod:`~dpkernels.experiments.park2022.protocol`: data sets, Table 7.1's settings, the published tables, the accuracy sweep (Figure 7.1,
  Tables 7.2-7.3, Figure 7.2) and the setting investigations;
* :mod:`~dpkernels.experiments.park2022.readings`: the readings of what the thesis does not say (feature scaling, the SVMs' box) and the rule that
  chooses one on Table 7.3's non-private column;
* :mod:`~dpkernels.experiments.park2022.statements`: the checks of the thesis's corollaries, theorems and Section 7's claims, with their criteria;
* :mod:`~dpkernels.experiments.park2022.audits`: privacy audits of Algorithm 1 and of Phase II;
* :mod:`~dpkernels.experiments.park2022.records`: results as table rows and tested hypotheses (``hypotheses.csv``);
* :mod:`~dpkernels.experiments.park2022.registry`: the hypotheses registered before they are run (``registry.yaml``).

``from dpkernels.experiments import park2022 as E`` gives all of them.
"""

from dpkernels.experiments.park2022.audits import *  # noqa: F401,F403
from dpkernels.experiments.park2022.audits import __all__ as _audits
from dpkernels.experiments.park2022.protocol import *  # noqa: F401,F403
from dpkernels.experiments.park2022.protocol import __all__ as _protocol
from dpkernels.experiments.park2022.readings import *  # noqa: F401,F403
from dpkernels.experiments.park2022.readings import __all__ as _readings
from dpkernels.experiments.park2022.records import *  # noqa: F401,F403
from dpkernels.experiments.park2022.records import __all__ as _records
from dpkernels.experiments.park2022.registry import *  # noqa: F401,F403
from dpkernels.experiments.park2022.registry import __all__ as _registry
from dpkernels.experiments.park2022.statements import *  # noqa: F401,F403
from dpkernels.experiments.park2022.statements import __all__ as _statements

__all__ = [*_protocol, *_readings, *_statements, *_audits, *_records, *_registry]
