"""Class: a class session (issue 34). The teacher's projector shows the join code and its QR
code, asks the pages' questions and pools the phones' rounds; a student's phone joins by the
code (no account, no name), answers and runs rounds. Who is who: ``specdec_ui.classroom.view``.
"""

from specdec_ui.classroom import view
from specdec_ui.kit.page_frame import page_frame

INTRO = (
    "The whole class takes part: phones join by the code on the projector (no name), answer "
    "the teacher's questions and run rounds, and the projector shows the class's answers and "
    "whether its pooled tokens follow p."
)

with page_frame(__file__, INTRO) as frame:
    view.messages()
    seat = view.seat()
    if seat is None:
        view.start_or_join()
    elif seat.teacher_key is not None:
        view.join_panel(seat)
        view.live_answers(seat)
        view.teacher_controls(seat)
        view.live_pool(seat)
        view.experiment_controls(seat)
    else:
        view.phone_question(seat)
        view.phone_rounds(seat)
