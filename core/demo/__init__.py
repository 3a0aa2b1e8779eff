"""The bundled demo: Rail & Co, a local train-booking site, and a scripted plan through it.

``handrail demo`` serves the site on 127.0.0.1, opens it as the person's own step, and
gives the agent :data:`DEMO_TASK`; without an API key the agent is the scripted plan from
:func:`core.demo.plan.demo_plan_lines`, which walks to the payment page where handrail's
payment detector hands the page back to the person.
"""

from core.demo.server import DemoSite, start_demo_site
from core.demo.task import DEMO_TASK

__all__ = ["DEMO_TASK", "DemoSite", "start_demo_site"]
