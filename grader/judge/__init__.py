"""The trusted side: references, comparison, scores, diagnosis and static hints; nothing the
student's process imports comes from here."""
